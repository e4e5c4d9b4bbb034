"""The page for a screen reader and a keyboard, in Chromium's accessibility tree (issue 35, item 11): every radio
and checkbox is in a group named by its label, every slider and number box is named, and a focused radio or
checkbox shows a clear ring."""

import pytest
from conftest import TIMEOUT_MS, open_view

pytestmark = [pytest.mark.browser, pytest.mark.served]
SETTLED = "() => window.explorer?.addressRead === true"
GROUPS = ("radiogroup", "group")


def accessibility_tree(page) -> dict[str, dict]:
    """{node id: node} of Chromium's full accessibility tree of ``page``, each with its ``parentId``."""
    session = page.context.new_cdp_session(page)
    tree = {node["nodeId"]: node for node in session.send("Accessibility.getFullAXTree")["nodes"]}
    for node in tree.values():
        for child in node.get("childIds", []):
            tree[child]["parentId"] = node["nodeId"]
    return tree


def role(node) -> str:
    return node.get("role", {}).get("value", "")


def name(node) -> str:
    return (node.get("name", {}).get("value") or "").strip()


def group_name(tree: dict, node: dict) -> str:
    """The name of the nearest radio group or group around ``node`` ("" when none is named)."""
    while (node := tree.get(node.get("parentId"))) is not None:
        if role(node) in GROUPS and name(node):
            return name(node)
    return ""


def test_every_choice_is_heard_with_its_groups_label_and_every_slider_and_number_box_is_named(browser, url):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(url)
        page.wait_for_function(SETTLED)
        views = page.evaluate("() => [...document.querySelectorAll('#views [data-tab-id]')].map(b => b.dataset.tabId)")
        unnamed, heard = set(), set()
        for view in views:  # a tab draws its controls when first opened
            open_view(page, view)
            tree = accessibility_tree(page)
            for node in (node for node in tree.values() if not node.get("ignored")):
                if role(node) in ("radio", "checkbox"):
                    heard.add((view, name(node), group_name(tree, node)))
                    if not group_name(tree, node):
                        unnamed.add((view, role(node), name(node)))
                elif role(node) in ("slider", "spinbutton", "radiogroup") and not name(node):
                    unnamed.add((view, role(node), ""))
        assert {
            ("attention", "2", "Layer"),
            ("attention", "2", "Head"),
            ("knockout", "L1 H2", "Heads switched off (L = layer, H = head)"),
        } <= heard
        assert not unnamed, sorted(unnamed)
    finally:
        context.close()


def test_a_radio_or_checkbox_reached_by_the_keyboard_shows_a_clear_focus_ring(page, url):
    page.goto(url)
    page.wait_for_function(SETTLED)
    for selector in ('#layer input[type="radio"]', '#leave-out input[type="checkbox"]'):
        page.locator(selector).first.focus()
        page.keyboard.press("Shift+Tab")
        page.keyboard.press("Tab")  # keyboard focus, so :focus-visible applies
        ring = page.evaluate(
            """() => { const style = getComputedStyle(document.activeElement);
                       return [document.activeElement.type, style.outlineStyle, parseFloat(style.outlineWidth)]; }"""
        )
        assert ring[0] in ("radio", "checkbox") and ring[1] != "none" and ring[2] >= 2, (selector, ring)
