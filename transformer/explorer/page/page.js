// The page's own scripts, loaded once in the page's <head> (explorer/page/scripts.py) after `window.explorerConfig`,
// the data they need from the server. Events call them as `explorer.<name>(values, ...)`: `values` are what
// Gradio passes a `js=` function (the event's inputs, then its outputs), and what they return is the event's
// values to send on. Only `window.explorer` is global.

(() => {
    "use strict";

    // how long the "Copy link" button says the link was copied
    const COPIED_MS = 2000;
    // how long a refused job is tried again: the server frees a job's share within ~12 s
    const RETRY_FOR_MS = 30000;
    // what the page's events POST to start a job
    const JOB_ROUTE = /\/gradio_api\/(?:queue\/join|run\/predict)$/;

    // A job the server refuses for now (429: this address holds its share, e.g. the events of pages just closed or
    // reloaded) is sent again after the wait the server names (Retry-After), with one line on the page meanwhile;
    // Gradio would show the refusal and the page would stay blank. Still refused after RETRY_FOR_MS, it gets the
    // refusal. The server still counts every job: this only waits, as the refusal asks.
    const gradioFetch = window.fetch.bind(window);
    // jobs waiting to be sent again: the line goes when none is left
    let retrying = 0;
    window.fetch = async (input, init) => {
        const url = typeof input === "string" || input instanceof URL ? new URL(input, location.href) : null;
        if (!url || init?.method !== "POST" || !JOB_ROUTE.test(url.pathname)) return gradioFetch(input, init);
        const giveUp = Date.now() + RETRY_FOR_MS;
        let response = await gradioFetch(input, init);
        retrying += 1;
        try {
            let waitMs = retryAfterMs(response);
            while (response.status === 429 && Date.now() + waitMs <= giveUp) {
                showBusy(waitMs);
                await new Promise((resolve) => setTimeout(resolve, waitMs));
                response = await gradioFetch(input, init);
                waitMs = retryAfterMs(response);
            }
        } finally {
            retrying -= 1;
            if (!retrying) document.getElementById("busy-retry")?.remove();
        }
        return response;
    };

    function retryAfterMs(response) {
        return 1000 * Math.max(1, Number(response.headers.get("retry-after")) || 1);
    }

    // The line that says a job waits `waitMs` to be sent again.
    function showBusy(waitMs) {
        let line = document.getElementById("busy-retry");
        if (!line) {
            line = document.createElement("p");
            line.id = "busy-retry";
            line.setAttribute("role", "status");
            line.style.cssText = "margin:0;padding:0.4em;text-align:center";
            document.body.prepend(line);
        }
        line.textContent = `The server is busy with this address's earlier requests: trying again in ${waitMs / 1000} s.`;
    }

    // The page load's answer came back: the sentence box shows its text unless the person changed it. The load writes
    // its text (the address's, else the default) into a hidden box, never into the sentence box, and this decides and
    // writes in one step, in the page: an event's output would land later, over keys typed meanwhile. A changed box
    // (typing, an example) wins, and `explorer.reanalyze` asks `reanalyzeTyped` to draw it, as the load drew another.
    function keepTyped([restored], initial) {
        const box = document.querySelector("#sentence textarea, #sentence input");
        if (!box) return;
        const typed = box.value !== initial;
        explorer.reanalyze = typed && box.value !== restored;
        if (typed || box.value === restored) return;
        box.value = restored;
        // Gradio's box takes its value from this event
        box.dispatchEvent(new Event("input", {bubbles: true}));
    }

    // The load's last step: a text typed while the page loaded is analyzed, since the load drew another one.
    // Pressing Analyze (rather than calling the server here) keeps one path for every analysis and its address.
    function reanalyzeTyped() {
        if (!explorer.reanalyze) return;
        explorer.reanalyze = false;
        document.getElementById("analyze")?.click();
    }

    // "Copy link": the address with the kept inputs' key. Where the clipboard is missing (a plain-http host) or
    // refuses, the link is shown selected in a field next to the button, to be copied by hand.
    async function copyLink([key]) {
        const url = new URL(window.location.href);
        url.searchParams.delete("deep_link");
        url.searchParams.set(explorerConfig.linkParam, key);
        const link = url.toString();
        try {
            // a TypeError where navigator.clipboard is undefined
            await navigator.clipboard.writeText(link);
        } catch {
            showLinkToCopy(link);
            return;
        }
        // an earlier fallback's link is out of date
        document.getElementById("copy-link-field")?.remove();
        relabel(document.getElementById("copy-link"), "Link copied");
    }

    function showLinkToCopy(link) {
        const button = document.getElementById("copy-link");
        let field = document.getElementById("copy-link-field");
        if (!field) {
            field = document.createElement("input");
            field.id = "copy-link-field";
            field.type = "text";
            field.readOnly = true;
            field.setAttribute("aria-label", "Link to this view: copy it by hand");
            field.style.width = "100%";
            button?.after(field);
        }
        field.value = link;
        field.focus();
        field.select();
        relabel(button, "Copy the link below");
    }

    // Says `label` on the button for COPIED_MS, then its own label again. Only the button's text node changes:
    // the icon and the element stay Gradio's.
    function relabel(button, label) {
        const text = button && [...button.childNodes].find((node) => node.nodeType === 3 && node.nodeValue.trim());
        if (!text) return;
        button.dataset.label ??= text.nodeValue;
        text.nodeValue = label;
        clearTimeout(button.relabelTimer);
        button.relabelTimer = setTimeout(() => {
            text.nodeValue = button.dataset.label;
        }, COPIED_MS);
    }

    // The address parameters an event sends, in its values' order: every one where `drawn` is null (the analysis,
    // the page load, the colour controls), else the page's own and view `drawn`'s (events.py's `address_after_draws`).
    // Read here, not passed by each event: the page's configuration would carry the lists once per event.
    function paramsOf(drawn) {
        const {globalParams, viewParams, urlParams} = explorerConfig;
        return drawn === null ? urlParams : [...globalParams, ...(viewParams[drawn] || [])];
    }

    // The colour controls changed: the address is written from every parameter, and the view on screen redrawn.
    function writeAddress(values) {
        writeAddressOf(values, paramsOf(null), Object.values(explorerConfig.viewOfTitle));
    }

    // After a view is drawn: the address holds the text, the view and that view's controls, so that a copied address
    // reproduces the view. `names` are the address parameters the event sends, in `values`' order; a parameter of
    // the view that the event does not send (a control it did not change) keeps its value in the address. Nothing
    // changes until the page load has read the address (`openAddressView`): Gradio selects the first tab as the page
    // mounts, and writing the address then would lose the view it asks for. Each view in `redraw` is redrawn when on
    // screen, by pressing its hidden button: each view has its own events, so no event names every view's components.
    // The address names the tab on screen, not the view in `values`: a tab's answer can come back after the next
    // tab's (two tabs clicked in quick succession) and name the view the person left. The tab on screen is then
    // made the page's current view again (its hidden button), so that the view left is drawn afresh when next opened.
    function writeAddressOf(values, names, redraw) {
        if (!explorer.addressRead) return;
        const current = values[names.indexOf("view")];
        const view = setAddress(values, names, tabOnScreen() ?? current);
        if (view !== current) document.getElementById(explorerConfig.currentId)?.click();
        if (redraw.includes(view)) redrawView(values, view);
    }

    // A view's address stamp changed: one of view `drawn`'s events drew it, or (`drawn` null) the analysis drew the
    // main view, after which the explanation tab on screen is redrawn (events.py's `address_after_draws`). `values`
    // are the stamp, then each of `paramsOf(drawn)`'s controls; the analysis sends the page's own parameters only
    // (it changes no view's controls), so the view on screen keeps those its draws wrote.
    function writeDrawnAddress([stamp, ...values], drawn) {
        if (!stamp) return;
        if (drawn === null) writeAddressOf(values, explorerConfig.globalParams, explorerConfig.explanations);
        else writeAddressOf(values, paramsOf(drawn), []);
    }

    // Redraws `view` by pressing its hidden button, whose event (the page's) draws it and then writes the address.
    function redrawView(values, view) {
        document.getElementById(explorerConfig.redrawId + view)?.click();
    }

    // The page load's last step: the address is read, so from now on views write it; its view's tab is selected (the
    // page opens on the first tab), whose select event then finds that view current: a long view is not drawn again.
    function openAddressView(values) {
        const names = paramsOf(null);
        explorer.addressRead = true;
        if (new URL(window.location.href).searchParams.get("view") === "api") return openApiPage();
        const view = setAddress(values, names, values[names.indexOf("view")]);
        const tab = [...document.querySelectorAll("#views [data-tab-id]")].find((b) => b.dataset.tabId === view);
        if (tab && tab.getAttribute("aria-selected") !== "true") tab.click();
    }

    // `?view=api` is Gradio's API page. Gradio 6.31 reads it as open but never loads the page; its footer button
    // toggles it, so pressed twice (closed, then open) it loads and shows it.
    function openApiPage() {
        if (document.querySelector(".api-docs")) return;
        const button = [...document.querySelectorAll("footer button")].find((b) => /\bAPI\b/.test(b.textContent));
        button?.click();
        button?.click();
    }

    // Writes the address of `view` from `values` (see `writeAddress`) and returns `view`: its own parameters that
    // `names` lists are written, those of other views dropped. While one of Gradio's own pages is open (`?view=api`:
    // the API page), the address is Gradio's: rewriting its `view` would close it. A text too long for an address is
    // left out and named in `cutParam`, so the address says so when opened (restore.py's `unrestored`).
    function setAddress(values, names, view) {
        const {globalParams, viewParams, urlParams, textParams, maxUrlText, linkParam, cutParam, gradioViews} =
            explorerConfig;
        const url = new URL(window.location.href);
        if (gradioViews.includes(url.searchParams.get("view"))) return view;
        url.searchParams.delete("deep_link");
        url.searchParams.delete(linkParam);
        const cut = new Set((url.searchParams.get(cutParam) || "").split(",").filter(Boolean));
        for (const name of urlParams) {
            const kept = globalParams.includes(name) || (viewParams[view] || []).includes(name);
            if (kept && !names.includes(name)) continue;
            const value = name === "view" ? view : values[names.indexOf(name)];
            const shown = Array.isArray(value) ? value.join(",") : String(value ?? "");
            const fits = !textParams.includes(name) || encodeURIComponent(shown).length <= maxUrlText;
            if (kept && fits && shown.trim()) {
                url.searchParams.set(name, shown);
            } else {
                url.searchParams.delete(name);
            }
            if (kept && names.includes(name)) {
                if (fits) cut.delete(name);
                else if (shown.trim()) cut.add(name);
            }
            if (!kept) cut.delete(name);
        }
        if (cut.size) url.searchParams.set(cutParam, [...cut].join(","));
        else url.searchParams.delete(cutParam);
        const before = window.location.href.split("#")[0];
        window.history.replaceState(window.history.state, "", url);
        followAddress(before, window.location.href.split("#")[0]);
        return view;
    }

    // Under Gradio's <base>, plotly points each gradient (a colour bar's fill) and clip path at the page's address as
    // it was at the figure's first draw (`gd._context._baseUrl`), and keeps that address for every redraw: once the
    // address changes, a resize redraws the colour bar white. Each figure follows the new address, as do the
    // references it has drawn.
    function followAddress(before, after) {
        if (before === after) return;
        for (const gd of document.querySelectorAll(".js-plotly-plot")) {
            if (gd._context?._baseUrl === before) gd._context._baseUrl = after;
            for (const element of gd.querySelectorAll("[style*='url('], [clip-path*='url(']")) {
                for (const name of ["style", "clip-path"]) {
                    const value = element.getAttribute(name);
                    if (value?.includes(before)) element.setAttribute(name, value.split(before).join(after));
                }
            }
        }
    }

    // The view whose tab is selected, or undefined before the tabs mount.
    function tabOnScreen() {
        const tab = document.querySelector('#views button[role="tab"][aria-selected="true"]');
        return explorerConfig.viewOfTitle[tab?.textContent.trim()];
    }

    // The hidden current-view button's input: the view on screen (its `values` as they were before the tabs mount).
    function tabOnScreenInput(values) {
        const view = tabOnScreen();
        return view === undefined ? values : [view];
    }

    // Before an analysis: its first input becomes the box's text as shown, its last (the view to draw) the tab on
    // screen. The page's current view changes only when a tab's select event comes back from the server, and a tab
    // chosen just before Analyze (the Errors tab opens a sentence in Attention) is already on screen. `count` is how
    // many of `values` are the event's inputs.
    function onScreenView(values, count) {
        const inputs = values.slice(0, count);
        const box = document.querySelector("#sentence textarea, #sentence input");
        // what the box shows is what is analysed, whatever Gradio last stored
        if (box) inputs[0] = box.value;
        const view = tabOnScreen();
        if (view) inputs[count - 1] = view;
        return inputs;
    }

    // The Errors tab's table: a clicked sentence is analyzed in the Attention tab.
    function openText([text]) {
        if (!text) return;
        const box = document.querySelector("#sentence textarea");
        box.value = text;
        box.dispatchEvent(new Event("input", {bubbles: true}));
        document.querySelector('#views [data-tab-id="attention"]')?.click();
        setTimeout(() => document.querySelector("#analyze").click(), 150);
    }

    // The Head atlas's table: a clicked head ("L2 H1") is shown in the Attention tab, its layer then its head.
    function openHead([name]) {
        const match = /^L(\d+) H(\d+)$/.exec(name || "");
        if (!match) return;
        document.querySelector('#views [data-tab-id="attention"]')?.click();
        const pick = (id, value) => [...document.querySelectorAll(`#${id} label`)]
            .find((label) => label.textContent.trim() === value)?.click();
        setTimeout(() => {
            pick("layer", match[1]);
            setTimeout(() => pick("head", match[2]), 150);
        }, 150);
    }

    // The Export tab's file, just built by one of its buttons, is in its hidden download button (each build sets
    // it, the same file again too): pressing that has the browser save it.
    function download() {
        document.getElementById("export-file")?.click();
    }

    // Gradio 6.31 draws a radio or checkbox group as a <fieldset> whose label is a <span>, not a <legend>: the group
    // has no accessible name, and a screen reader says "2, radio" where the page shows "Layer". Each such group is
    // named by its label (`aria-labelledby`), a radio group also gets its role. Tabs draw their controls when first
    // opened, so this runs again after each change to the page, at most once a frame.
    function nameGroups() {
        for (const label of document.querySelectorAll('fieldset:not([aria-labelledby]) > [data-testid="block-info"]')) {
            const group = label.parentElement;
            label.id ||= `${group.id || "group"}-label-${++nameGroups.count}`;
            group.setAttribute("aria-labelledby", label.id);
            if (group.querySelector('input[type="radio"]')) group.setAttribute("role", "radiogroup");
        }
    }
    nameGroups.count = 0;

    // Gradio's API page opens each parameter's description with "The input value that is provided in the "text" Api
    // component."; the description (from the endpoint's docstring, explorer/page/api.py) says it better alone.
    const GRADIO_PARAMETER = /The input value that is provided in the "[^"]*"\s+\S*\s+component\.\s*(\S?)/;
    function plainApiDocs() {
        const docs = document.querySelector(".api-docs");
        if (!docs) return;
        const texts = document.createTreeWalker(docs, NodeFilter.SHOW_TEXT);
        while (texts.nextNode()) {
            const text = texts.currentNode;
            if (GRADIO_PARAMETER.test(text.data)) {
                text.data = text.data.replace(GRADIO_PARAMETER, (_, first) => first.toUpperCase());
            }
        }
    }
    let naming = false;
    new MutationObserver(() => {
        if (naming) return;
        naming = true;
        requestAnimationFrame(() => {
            naming = false;
            nameGroups();
            plainApiDocs();
            rovingStops();
        });
    }).observe(document.documentElement, {childList: true, subtree: true});

    // The keyboard, as WAI-ARIA's tabs and radio group patterns say: the tab bar and each radio group are one Tab
    // stop (the selected tab, the checked option), and the arrow keys, Home and End move within them and select.
    // Gradio gives each tab and each radio option a Tab stop of its own (a radio's name is its own), so reaching the
    // Attention controls took about 34 presses.
    const STEP_KEYS = {ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1};
    const TAB = '#views [role="tablist"] [role="tab"]', OPTION = 'fieldset[role="radiogroup"] input[type="radio"]';
    function rovingStops() {
        for (const list of document.querySelectorAll('#views [role="tablist"]')) {
            roving([...list.querySelectorAll('[role="tab"]')], (tab) => tab.getAttribute("aria-selected") === "true");
        }
        for (const group of document.querySelectorAll('fieldset[role="radiogroup"]')) {
            roving([...group.querySelectorAll('input[type="radio"]')], (option) => option.checked);
        }
    }
    function roving(items, current) {
        const stop = items.find(current) || items[0];
        for (const item of items) item.tabIndex = item === stop ? 0 : -1;
    }
    function siblings(item) {
        if (item.matches?.(TAB)) return [...item.closest('[role="tablist"]').querySelectorAll('[role="tab"]')];
        if (item.matches?.(OPTION)) return [...item.closest("fieldset").querySelectorAll('input[type="radio"]')];
        return null;
    }
    document.addEventListener("keydown", (event) => {
        const items = siblings(event.target);
        const at = items ? items.indexOf(event.target) : -1;
        const to = event.key in STEP_KEYS ? (at + STEP_KEYS[event.key] + items.length) % items.length
            : {Home: 0, End: items?.length - 1}[event.key];
        if (at < 0 || to === undefined || event.altKey || event.ctrlKey || event.metaKey) return;
        event.preventDefault();
        items[to].focus();
        items[to].click();
        roving(items, (item) => item === items[to]);
    }, true);
    // a click on a radio option moves its group's stop
    document.addEventListener("change", rovingStops, true);

    // What the page's events call. `addressRead` and `reanalyze` are the page's two flags, set by the page load.
    const explorer = {
        addressRead: false,
        reanalyze: false,
        keepTyped,
        reanalyzeTyped,
        copyLink,
        writeAddress,
        writeDrawnAddress,
        redrawView,
        tabOnScreenInput,
        openAddressView,
        onScreenView,
        openText,
        openHead,
        download,
    };
    window.explorer = explorer;
})();
