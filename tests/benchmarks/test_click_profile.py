"""``benchmarks.click_profile``'s reading of a CPU profile, on a profile made by hand."""

from benchmarks.click_profile import summarise


def node(id_: int, name: str, children: list[int] = ()) -> dict:
    return {"id": id_, "callFrame": {"functionName": name, "url": "http://x/page.js", "lineNumber": 1},
            "children": list(children)}  # fmt: skip


def test_self_and_inclusive_time_per_click_with_a_recursion_counted_once_and_idle_left_out():
    nodes = [
        node(1, "(root)", [2, 5]),
        node(2, "draw", [3]),
        node(3, "clone", [4]),
        node(4, "clone"),
        node(5, "(idle)"),
    ]
    # samples: draw 1 ms, the inner clone 2 ms (clone inside clone), idle 5 ms; over 2 clicks
    profile = {"nodes": nodes, "samples": [2, 4, 4, 5], "timeDeltas": [1000, 1000, 1000, 5000]}
    lines = summarise(profile, rounds=2)
    assert lines[0] == "  busy 2 ms a click; self time:"  # (1 + 2) ms / 2 clicks, idle left out
    own = lines[1 : lines.index("  inclusive time:")]
    assert own == ["        1.0  clone page.js:1", "        0.5  draw page.js:1"]
    inclusive = lines[lines.index("  inclusive time:") + 1 :]
    assert inclusive == ["        1.5  draw page.js:1", "        1.0  clone page.js:1"]  # not 2.0: once a sample
