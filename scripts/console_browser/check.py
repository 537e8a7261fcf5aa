"""The web console in a real browser (headless Chromium through Selenium).

Run by scripts/check-console.sh, which starts Herald and makes the person and the apps.
Prints one line per check and exits 1 if any failed.
"""

import json
import os
import sys

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

URL = os.environ["HERALD_URL"]
APP = os.environ["CONSOLE_APP_KEY"]
OTHER = os.environ["CONSOLE_OTHER_APP_KEY"]
EMAIL = os.environ["CONSOLE_EMAIL"]
PASSWORD = os.environ["CONSOLE_PASSWORD"]

failures = []


def check(name, condition, detail=""):
    print(("ok    " if condition else "FAIL  ") + name + ("" if condition else f": {detail}"))
    if not condition:
        failures.append(name)


def browser(width=1280, height=900, dark=False):
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ["CHROMIUM"]
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", f"--window-size={width},{height}"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=os.environ["CHROMEDRIVER"]), options=options)
    if width < 500:
        # A desktop window is never narrower than 500 px: a phone is emulated.
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 3, "mobile": True})
    if dark:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    return driver


def policy_violations(driver):
    """What the browser logged about the Content-Security-Policy, or a script's error (the
    pages that answer 401 or 404 on purpose are logged too, and are not errors)."""
    return [entry["message"] for entry in driver.get_log("browser")
            if "Content Security Policy" in entry["message"] or "Uncaught" in entry["message"]
            or (entry["level"] == "SEVERE" and "Failed to load resource" not in entry["message"])]


def sign_in_with_keyboard(driver):
    driver.get(URL + "/console")
    WebDriverWait(driver, 10).until(EC.presence_of_element_located((By.ID, "email")))
    check("signed out, the console sends to its sign-in page", driver.current_url.endswith("/console/sign-in"), driver.current_url)
    body = driver.find_element(By.TAG_NAME, "body")
    body.click()
    # The keyboard alone: Tab to the email field, type, Tab, type, Enter.
    active = driver.switch_to.active_element
    for _ in range(10):
        if active.get_attribute("id") == "email":
            break
        active.send_keys(Keys.TAB)
        active = driver.switch_to.active_element
    check("the email field is reached with Tab", active.get_attribute("id") == "email", active.get_attribute("outerHTML"))
    active.send_keys(EMAIL)
    active.send_keys(Keys.TAB)
    active = driver.switch_to.active_element
    check("Tab goes on to the password", active.get_attribute("id") == "password", active.get_attribute("outerHTML"))
    active.send_keys(PASSWORD)
    active.send_keys(Keys.ENTER)
    WebDriverWait(driver, 10).until(EC.url_matches(r".*/console$"))


def main():
    driver = browser()
    try:
        # A wrong password: said next to the form, nothing else.
        driver.get(URL + "/console/sign-in")
        driver.find_element(By.ID, "email").send_keys(EMAIL)
        driver.find_element(By.ID, "password").send_keys("not the password")
        driver.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
        WebDriverWait(driver, 10).until(EC.presence_of_element_located((By.CSS_SELECTOR, "[role=alert]")))
        check("a wrong password is said on the form", "Wrong email or password" in driver.find_element(By.CSS_SELECTOR, "[role=alert]").text)
        check("every control has its label", all(
            driver.find_elements(By.CSS_SELECTOR, f"label[for='{field.get_attribute('id')}']")
            for field in driver.find_elements(By.CSS_SELECTOR, "input:not([type=hidden])")))

        sign_in_with_keyboard(driver)
        cookie = driver.get_cookie("herald_session") or {}
        check("the session cookie is HttpOnly and SameSite=Strict", cookie.get("httpOnly") and cookie.get("sameSite") == "Strict", json.dumps(cookie))
        text = driver.find_element(By.TAG_NAME, "main").text
        check("the apps page lists the person's app, escaped as text", "Console <check> & co" in text and APP in text, text)
        check("and not another's", OTHER not in driver.page_source)

        driver.find_element(By.LINK_TEXT, "Console <check> & co").click()
        WebDriverWait(driver, 10).until(EC.url_contains("/console/apps/" + APP))
        facts = driver.find_element(By.CSS_SELECTOR, "dl.facts").text
        check("the app's page shows its key and the person's role", APP in facts and "operator" in facts, facts)

        # Finding a device: a search that matches nothing says so.
        driver.find_element(By.LINK_TEXT, "Find a device").click()
        WebDriverWait(driver, 10).until(EC.presence_of_element_located((By.ID, "q")))
        driver.find_element(By.ID, "q").send_keys("nobody-here" + Keys.ENTER)
        WebDriverWait(driver, 10).until(EC.presence_of_element_located((By.CSS_SELECTOR, "[role=status]")))
        check("a device search that matches nothing says so", "No device of this app matches" in driver.page_source)
        driver.get(URL + "/console/apps/" + APP)

        # The composer: a preview shows the exact body and its curl line; nothing is sent.
        driver.find_element(By.LINK_TEXT, "Compose a push").click()
        WebDriverWait(driver, 10).until(EC.presence_of_element_located((By.ID, "alert")))
        driver.find_element(By.ID, "alert").send_keys("Hello from the console")
        driver.find_element(By.CSS_SELECTOR, "button[value=preview]").click()
        WebDriverWait(driver, 10).until(EC.presence_of_element_located((By.CSS_SELECTOR, "section.preview")))
        blocks = [element.text for element in driver.find_elements(By.CSS_SELECTOR, "section.preview pre")]
        check("the preview shows the exact /v3/push body and a curl line",
              len(blocks) == 2 and '"alert" : "Hello from the console"' in blocks[0] and blocks[1].startswith("curl -X POST"), blocks)
        check("and the audience's size before anything is sent", "Send to 0 devices" in driver.page_source)

        driver.get(URL + "/console/apps/" + OTHER)
        check("another app's page is not found", "No app" in driver.find_element(By.TAG_NAME, "h1").text + driver.page_source)

        check("the stylesheet and script were loaded from Herald",
              driver.execute_script("return getComputedStyle(document.body).margin === '0px'"))
        reported = policy_violations(driver)
        check("the browser reported no policy violation and no script error", not reported, reported)

        # Sign out with the button (a form with the CSRF token).
        driver.get(URL + "/console")
        driver.find_element(By.CSS_SELECTOR, "header form button").click()
        WebDriverWait(driver, 10).until(EC.url_contains("/console/sign-in"))
        driver.get(URL + "/console")
        check("signed out, the console asks to sign in again", driver.current_url.endswith("/console/sign-in"), driver.current_url)
    finally:
        driver.quit()

    # A phone's width, in dark mode.
    phone = browser(width=390, height=844, dark=True)
    try:
        sign_in_with_keyboard(phone)
        width = phone.execute_script("return document.documentElement.scrollWidth")
        check("nothing overflows a phone's width", width <= 390, f"scroll width {width}")
        background = phone.execute_script("return getComputedStyle(document.body).backgroundColor")
        check("dark mode is dark", background in ("rgb(18, 20, 23)",), background)
        reported = policy_violations(phone)
        check("no policy violation on the phone either", not reported, reported)
    finally:
        phone.quit()

    print(f"{'FAILED: ' + ', '.join(failures) if failures else 'all console checks passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
