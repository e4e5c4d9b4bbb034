// The page's own scripts. page.py reads this file once and wraps it into each event's `js=` function, which
// calls one of these: Gradio runs a `js=` string as one function expression, so they cannot be shared otherwise.

const COPIED_MS = 2000; // how long the "Copy link" button says the link was copied

// The page load's answer came back: what the sentence box should hold. The load writes its text (the address's,
// else the default) into a hidden box, never into the sentence box, so nothing typed while it ran is lost.
// The box differs from its `initial` value only when the person changed it (typing, an example): then it
// wins, and `window.__explorerReanalyse` asks `reanalyseTyped` to draw it, as the load drew the other text.
function keepTyped(restored, current, initial) {
    const box = document.querySelector("#sentence textarea, #sentence input");
    const shown = box ? box.value : current;
    const typed = shown !== initial;
    window.__explorerReanalyse = typed && shown !== restored;
    return typed ? shown : restored;
}

// The load's last step: a text typed while the page loaded is analysed, since the load drew another one.
// Pressing Analyze (rather than calling the server here) keeps one path for every analysis and its address.
function reanalyseTyped() {
    if (!window.__explorerReanalyse) return;
    window.__explorerReanalyse = false;
    document.getElementById("analyze")?.click();
}

// "Copy link": the address with the kept inputs' key. Where the clipboard is missing (a plain-http host) or
// refuses, the link is shown selected in a field next to the button, to be copied by hand.
async function copyLink(key, param) {
    const url = new URL(window.location.href);
    url.searchParams.delete("deep_link");
    url.searchParams.set(param, key);
    const link = url.toString();
    try {
        await navigator.clipboard.writeText(link); // a TypeError where navigator.clipboard is undefined
    } catch {
        showLinkToCopy(link);
        return;
    }
    document.getElementById("copy-link-field")?.remove(); // an earlier fallback's link is out of date
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
