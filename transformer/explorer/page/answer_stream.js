// The page's stream of answers, kept open while an answer is due on it (loaded after page.js, whose fetch it wraps).
//
// Gradio's page reads every event's answer from one stream per session (GET queue/data). The server closes it with a
// `close_stream` message once none of the session's events is pending, and the page opens a new one when it joins its
// next event, unless it still takes its stream for open. An event joined just as the stream closes is lost: the
// join's answer (POST queue/join) is read before the close, so the page opens no stream; then the close comes, and
// the event's answer waits unread until the server drops it (admission's UNREAD_SECONDS). The event stays pending in
// the page, and every later press of its button waits behind it: Analyze pressed as the page load's answer came
// back drew nothing (Gradio 6.31, on a busy machine). So Gradio's client never reads a close: when the server closes
// the stream, it is opened again as soon as an answer is due on it, and the client reads one stream throughout.

(() => {
    "use strict";

    const JOIN_ROUTE = /\/gradio_api\/queue\/join$/;
    const STREAM_ROUTE = /\/gradio_api\/queue\/data$/;
    // An SSE event's message and event id: the server writes `data: {"msg": ..., "event_id": ..., ...}\n\n`.
    const HEAD = /^data: ?\{"msg": ?"(\w+)", ?"event_id": ?(?:"([^"]+)"|null)/;
    // enough for HEAD: a kind and an event id of 32 hex digits
    const HEAD_BYTES = 120;
    const LINE_FEED = 10;
    const decoder = new TextDecoder();
    const innerFetch = window.fetch.bind(window);
    // events joined whose answer the page has not read to its end
    const due = new Set();
    // events whose answer ended before their join's answer was read
    const endedEarly = new Set();
    // the waits of closed streams for an answer to be due
    const waiting = new Set();

    window.fetch = async (input, init) => {
        if (input instanceof Request && input.method === "GET" && STREAM_ROUTE.test(new URL(input.url).pathname)) {
            return openAnswers(input);
        }
        const response = await innerFetch(input, init);
        const url = typeof input === "string" || input instanceof URL ? new URL(input, location.href) : null;
        if (url && init?.method === "POST" && JOIN_ROUTE.test(url.pathname) && response.ok) joined(response.clone());
        return response;
    };

    // A joined event's answer is due on the stream, unless it has already ended there.
    async function joined(response) {
        const eventId = (await response.json().catch(() => ({})))?.event_id;
        if (!eventId || endedEarly.delete(eventId)) return;
        due.add(eventId);
        wakeAll();
    }

    function wakeAll() {
        for (const resolve of waiting) resolve();
        waiting.clear();
    }

    // The stream Gradio's client reads: the server's streams one after another, without their closes. It ends where
    // the client cancels it or aborts its request, or where a server stream ends without a close.
    async function openAnswers(request) {
        const first = await innerFetch(request.clone());
        if (!first.ok || !first.body) return first;
        const relayed = {request, reader: null, cancelled: false};
        const body = new ReadableStream({
            start(controller) {
                request.signal.addEventListener("abort", () => {
                    controller.error(request.signal.reason);
                    wakeAll();
                });
                relay(relayed, first, controller);
            },
            cancel() {
                relayed.cancelled = true;
                relayed.reader?.cancel().catch(() => {});
                wakeAll();
            },
        });
        return new Response(body, {status: first.status, statusText: first.statusText, headers: first.headers});
    }

    function stopped(relayed) {
        return relayed.cancelled || relayed.request.signal.aborted;
    }

    // Passes each server stream on until it closes, then opens the next once an answer is due.
    async function relay(relayed, response, controller) {
        try {
            while (response) {
                relayed.reader = response.body.getReader();
                if (!(await passOn(relayed.reader, controller))) return controller.close();
                response = await reopened(relayed);
            }
        } catch (error) {
            if (!stopped(relayed)) controller.error(error);
        } finally {
            relayed.reader?.cancel().catch(() => {});
        }
    }

    // The next server stream, opened once an answer is due; null if the client stopped reading meanwhile. One the
    // server refuses fails the stream, as a refused first one does: Gradio's client then says the connection is lost.
    async function reopened(relayed) {
        while (!due.size && !stopped(relayed)) await new Promise((resolve) => waiting.add(resolve));
        if (stopped(relayed)) return null;
        const response = await innerFetch(relayed.request.clone());
        if (response.ok && response.body) return response;
        throw new Error(`The answers could not be read again (HTTP ${response.status})`);
    }

    // Passes one server stream's events on, whole and as the bytes they came in, and notes each answer that ends; true
    // if the stream closed, false if it ended without a close (passed on as the end). An event ends at two line feeds:
    // UTF-8 puts a line feed's byte in no other character, so the bytes are never decoded past an event's head. The
    // server closes a stream only once none of the session's events is pending, so an event that had a message on it
    // and no end was dropped (its page seen gone, its answer unread too long): none is due any more.
    async function passOn(reader, controller) {
        // events with a message on this stream and no end yet
        const open = new Set();
        // the bytes of the event being read, as they came
        let event = [];
        // the last byte of the chunk before, while an event is being read
        let lastByte = 0;
        for (;;) {
            const {done, value} = await reader.read();
            if (done) return false;
            if (!value.length) continue;
            let start = 0;
            for (let at = value.indexOf(LINE_FEED); at >= 0; at = value.indexOf(LINE_FEED, at + 1)) {
                const before = at > start ? value[at - 1] : start === 0 ? lastByte : 0;
                if (before !== LINE_FEED) continue;
                event.push(value.subarray(start, at + 1));
                const [, message, eventId] = HEAD.exec(headOf(event)) || [];
                if (message === "close_stream") {
                    reader.cancel().catch(() => {});
                    open.forEach(ended);
                    return true;
                }
                if (message === "process_completed") {
                    open.delete(eventId);
                    ended(eventId);
                } else if (eventId) {
                    open.add(eventId);
                }
                for (const part of event) controller.enqueue(part);
                event = [];
                start = at + 1;
            }
            if (start < value.length) event.push(value.subarray(start));
            lastByte = start < value.length ? value[value.length - 1] : 0;
        }
    }

    // An event's answer is over: it is no longer due, or, its join not yet read, will not be.
    function ended(eventId) {
        if (eventId && !due.delete(eventId)) endedEarly.add(eventId);
    }

    // The first characters of an event (its bytes as they came), enough for HEAD.
    function headOf(event) {
        const head = new Uint8Array(HEAD_BYTES);
        let length = 0;
        for (const part of event) {
            const taken = part.subarray(0, HEAD_BYTES - length);
            head.set(taken, length);
            length += taken.length;
            if (length === HEAD_BYTES) break;
        }
        return decoder.decode(head.subarray(0, length));
    }
})();
