"""Debian's Chromium for Playwright, launched one way for the benchmarks and the tests' ``browser`` fixture."""

CHROMIUM = "/usr/bin/chromium"  # never a browser that ``playwright install`` downloads
# No update checks, downloads or first-run pages: nothing leaves the machine, nothing runs beside the page.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def launch_chromium(playwright):
    """Debian's Chromium, launched by a sync ``playwright`` with ``CHROMIUM_ARGS``."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
