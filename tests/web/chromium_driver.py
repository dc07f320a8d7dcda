"""One headless Chromium from Debian's packages driven by Selenium through the system's
chromedriver (never a download), for the browser tests and benchmarks/bench_page.py; without
them a test skips, saying why."""

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
WINDOW = (900, 560)  # the screenshot's size in pixels
WAIT_S = 60  # how long a check waits for the page: generous, for a loaded CPU


def chromium(width: int = WINDOW[0], height: int = WINDOW[1]):
    """A headless Chromium under Selenium, its driver the system's (Selenium Manager is never
    asked: it would download one); pytest.skip when Selenium or Chromium is absent."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed (pip install -e '.[test]')")
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip("no chromium or chromedriver (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",  # CI runs as root
        "--disable-dev-shm-usage",
        f"--window-size={width},{height}",
        "--force-device-scale-factor=1",
        "--hide-scrollbars",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)  # the viewport's size
    return driver
