// Runs page/answer_stream.js in Node against a fake server, for tests/explorer/page/test_answer_stream.py.
//
// Usage: node answer_stream_driver.js SCRIPT CASES_JSON. Each case is {joins: [event id, ...], joinsLater: [event
// id, ...], streams: [[chunk, ...], ...]}, a chunk being a list of bytes: the joins are answered in turn, then the
// page's stream of answers is opened, JOIN_LATER_MS later the later joins are made, and the stream is read until it
// ends, fails or is idle for IDLE_MS, each server stream being the next of `streams` (null: refused with a 404; none
// left: one that never answers). Prints, per case, {read: [bytes], ended, failed: the error or null, opened: how many
// server streams were asked for}.

const fs = require("fs");

const IDLE_MS = 300;
const JOIN_LATER_MS = 50;
const JOIN = "http://page.test/gradio_api/queue/join?text=a+query"; // Gradio's page adds the address's query
const [script, casesPath] = process.argv.slice(2);

async function runCase({joins, joinsLater = [], streams}) {
    const eventIds = [...joins, ...joinsLater];
    let opened = 0;
    globalThis.window = globalThis;
    globalThis.location = {href: "http://page.test/"};
    window.fetch = async (input, init) => {
        if (init?.method === "POST") return Response.json({event_id: eventIds.shift()});
        opened += 1;
        const chunks = streams.shift();
        if (chunks === null) return new Response("no such session", {status: 404});
        const body = new ReadableStream({
            start(controller) {
                if (!chunks) return; // a server that never answers
                for (const chunk of chunks) controller.enqueue(new Uint8Array(chunk));
                controller.close();
            },
        });
        // as a fetch answers, but its body the very stream above (a Response drops empty chunks)
        return {ok: true, status: 200, statusText: "OK", headers: new Headers(), body};
    };
    eval(fs.readFileSync(script, "utf8")); // wraps the fake fetch, as the page's wraps Gradio's
    for (const _ of joins) await fetch(JOIN, {method: "POST"});
    const aborting = new AbortController();
    const request = new Request("http://page.test/gradio_api/queue/data?session_hash=s", {signal: aborting.signal});
    const reader = (await fetch(request)).body.getReader();
    setTimeout(async () => {
        for (const _ of joinsLater) await fetch(JOIN, {method: "POST"});
    }, JOIN_LATER_MS);
    const read = [];
    for (;;) {
        let timer, next;
        const idle = new Promise((resolve) => (timer = setTimeout(() => resolve("idle"), IDLE_MS)));
        try {
            next = await Promise.race([reader.read(), idle]);
        } catch (error) {
            return {read, ended: false, failed: String(error), opened};
        } finally {
            clearTimeout(timer);
        }
        if (next === "idle") {
            aborting.abort();
            return {read, ended: false, failed: null, opened};
        }
        if (next.done) return {read, ended: true, failed: null, opened};
        read.push(...next.value);
    }
}

(async () => {
    const results = [];
    for (const testCase of JSON.parse(fs.readFileSync(casesPath, "utf8"))) results.push(await runCase(testCase));
    process.stdout.write(JSON.stringify(results));
})();
