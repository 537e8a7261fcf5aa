"""The web console in a real browser (headless Chromium through Selenium).

Run by scripts/check-console.sh, which starts Herald and makes the person and the apps.
Prints one line per check and exits 1 if any failed.
"""

import json
import os
import subprocess
import sys
import time

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

URL = os.environ["HERALD_URL"]
APP = os.environ["CONSOLE_APP_KEY"]
OTHER = os.environ["CONSOLE_OTHER_APP_KEY"]
EMAIL = os.environ["CONSOLE_EMAIL"]
PASSWORD = os.environ["CONSOLE_PASSWORD"]

ADMIN = os.environ["CONSOLE_ADMIN_EMAIL"]
SHOTS = os.environ["CONSOLE_SCREENSHOTS"]

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


def sign_in(driver, email):
    driver.get(URL + "/console/sign-in")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "password").send_keys(PASSWORD + Keys.ENTER)
    WebDriverWait(driver, 10).until(EC.url_matches(r".*/console$"))


def shot(driver, name):
    driver.save_screenshot(os.path.join(SHOTS, name + ".png"))


def wait_for_text(driver, selector, wanted, seconds=20):
    """Waits until the element's text is `wanted` (or starts with it, for a `wanted`
    ending in "…"); returns its last text."""
    deadline = time.time() + seconds
    text = None
    while time.time() < deadline:
        elements = driver.find_elements(By.CSS_SELECTOR, selector)
        text = elements[0].text if elements else None
        if text is not None and (text == wanted or (wanted.endswith("…") and text.startswith(wanted[:-1]))):
            break
        time.sleep(0.25)
    return text


def weigh(driver, path, name):
    """A page's weight (every byte the browser fetched, compressed as sent) and its first
    contentful paint, loaded in a fresh browser (nothing cached)."""
    fresh = browser()
    try:
        # The session, set before anything is loaded (so nothing is cached yet).
        for cookie in driver.get_cookies():
            fresh.execute_cdp_cmd("Network.setCookie", {"name": cookie["name"], "value": cookie["value"], "url": URL, "path": "/"})
        fresh.get(URL + path)
        time.sleep(1)
        figures = fresh.execute_script("""
            const nav = performance.getEntriesByType("navigation")[0];
            const resources = performance.getEntriesByType("resource").filter((r) => r.initiatorType !== "fetch");
            const paint = performance.getEntriesByName("first-contentful-paint")[0];
            return {
                bytes: nav.transferSize + resources.reduce((sum, r) => sum + r.transferSize, 0),
                decoded: nav.decodedBodySize + resources.reduce((sum, r) => sum + r.decodedBodySize, 0),
                requests: 1 + resources.length,
                firstPaint: paint ? paint.startTime : null,
                loaded: nav.loadEventEnd,
            };""")
        print(f"measure  {name}: {figures['bytes']} bytes transferred ({figures['decoded']} decoded) in {figures['requests']} requests, "
              f"first contentful paint {figures['firstPaint']:.0f} ms, load {figures['loaded']:.0f} ms")
    finally:
        fresh.quit()


def operator_flow():
    """An instance admin: a new app, its .p8, a device on MQTT, a push watched to its
    acknowledgement and recalled, test devices, and what is refused."""
    driver = browser()
    device = None
    try:
        sign_in(driver, ADMIN)
        shot(driver, "apps")
        driver.find_element(By.LINK_TEXT, "New app").click()
        WebDriverWait(driver, 10).until(EC.presence_of_element_located((By.ID, "name")))
        driver.find_element(By.ID, "name").send_keys("Browser shop" + Keys.ENTER)
        WebDriverWait(driver, 10).until(EC.presence_of_element_located((By.ID, "master-secret")))
        app_key = driver.find_element(By.ID, "app-key").text
        secret = driver.find_element(By.ID, "master-secret").text
        check("a new app's master secret is shown once", len(secret) >= 24 and len(app_key) == 24, f"{app_key} {secret}")
        shot(driver, "app-created")

        # Its APNs key: the .p8 chosen as a file; checked against APNs before it is saved.
        driver.get(URL + f"/console/apps/{app_key}/settings")
        driver.find_element(By.ID, "bundle_id").send_keys("com.example.browsershop")
        Select(driver.find_element(By.ID, "environment")).select_by_value("sandbox")
        driver.find_element(By.ID, "key_id").send_keys("CHECK12345")
        driver.find_element(By.ID, "team_id").send_keys("TEAMCHECK1")
        driver.find_element(By.ID, "key_file").send_keys(os.environ["CONSOLE_P8"])
        WebDriverWait(driver, 10).until(lambda d: "PRIVATE KEY" in d.find_element(By.ID, "private_key").get_attribute("value"))
        driver.find_element(By.CSS_SELECTOR, "form[action$='/apns'] button[type=submit]").click()
        WebDriverWait(driver, 20).until(EC.url_contains("saved=apns"))
        check("the .p8 upload is checked and saved", "ok: token key CHECK12345" in driver.page_source, driver.find_element(By.TAG_NAME, "main").text[:400])

        # Its FCM service account: the key file chosen as a file, for another project first
        # (refused next to the field), then for its own; tried at the token endpoint.
        driver.find_element(By.ID, "project_id").send_keys("another-shop")
        driver.find_element(By.ID, "fcm_file").send_keys(os.environ["CONSOLE_FCM_KEY"])
        WebDriverWait(driver, 10).until(lambda d: "service_account" in d.find_element(By.ID, "service_account").get_attribute("value"))
        driver.find_element(By.CSS_SELECTOR, "form[action$='/fcm'] button[type=submit]").click()
        WebDriverWait(driver, 10).until(EC.presence_of_element_located((By.ID, "fcm-error")))
        check("a key file for another project is refused next to the field", "another-shop" in driver.find_element(By.ID, "fcm-error").text, driver.find_element(By.ID, "fcm-error").text)
        project = driver.find_element(By.ID, "project_id")
        project.clear()
        project.send_keys("browser-shop")
        driver.find_element(By.ID, "fcm_file").send_keys(os.environ["CONSOLE_FCM_KEY"])
        WebDriverWait(driver, 10).until(lambda d: "service_account" in d.find_element(By.ID, "service_account").get_attribute("value"))
        driver.find_element(By.CSS_SELECTOR, "form[action$='/fcm'] button[type=submit]").click()
        WebDriverWait(driver, 20).until(EC.url_contains("saved=fcm"))
        check(
            "the FCM key file is checked at its token endpoint and saved",
            "ok: firebase-adminsdk-check@browser-shop.iam.gserviceaccount.com, project browser-shop" in driver.page_source,
            driver.find_element(By.TAG_NAME, "main").text[:600],
        )
        shot(driver, "settings")

        # A destructive action without the password again: refused.
        driver.find_element(By.ID, "confirm_name").send_keys("Browser shop")
        driver.execute_script("window.confirm = () => true;")
        driver.find_element(By.CSS_SELECTOR, "form[action$='/delete'] button[type=submit]").click()
        WebDriverWait(driver, 10).until(EC.presence_of_element_located((By.CSS_SELECTOR, "[role=alert]")))
        check("deleting an app without the password again is refused",
              "password again" in driver.find_element(By.CSS_SELECTOR, "[role=alert]").text)
        # A forged form (no CSRF token of this session): refused, nothing deleted.
        status = driver.execute_script(f"""
            return fetch("/console/apps/{app_key}/delete", {{method: "POST",
                body: new URLSearchParams({{_csrf: "forged", confirm_name: "Browser shop", password: "{PASSWORD}"}})}})
                .then((r) => r.status);""")
        check("a form without the session's CSRF token is refused", status == 403, status)

        # A device on MQTT, with a tag.
        device = subprocess.Popen(
            [os.environ["HERALD_DEVICE"], "--api", URL, "--port", os.environ["HERALD_MQTT_PORT"], "--app-key", app_key,
             "--platform", "android", "--tag", "browser-check", "--state", os.path.join(os.environ["CONSOLE_WORK"], "device.json")],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
        registration_id = None
        for line in device.stdout:
            if line.startswith("registration_id "):
                registration_id = line.split()[1]
            if line.strip() == "connected":
                break
        check("a device registered and connected over MQTT", registration_id is not None, registration_id)

        # Compose to its tag, send, watch the funnel reach "acknowledged".
        driver.get(URL + f"/console/apps/{app_key}/compose")
        Select(driver.find_element(By.ID, "audience_kind")).select_by_value("tag")
        driver.find_element(By.ID, "audience_values").send_keys("browser-check")
        driver.find_element(By.ID, "title").send_keys("Browser check")
        driver.find_element(By.ID, "alert").send_keys("Funnel check")
        live = wait_for_text(driver, "#live-size", "Audience now: 1 devices.…", seconds=10)
        check("the audience's size shows as the form is filled in", (live or "").startswith("Audience now: 1 devices."), live)
        check("the lock screen preview follows the text", driver.find_element(By.ID, "lock-body").text == "Funnel check")
        driver.find_element(By.CSS_SELECTOR, "button[value=preview]").click()
        WebDriverWait(driver, 10).until(EC.presence_of_element_located((By.CSS_SELECTOR, "button.send")))
        shot(driver, "compose")
        check("the send button names the audience's size", "Send to 1 devices" in driver.find_element(By.CSS_SELECTOR, "button.send").text)
        driver.find_element(By.CSS_SELECTOR, "button.send").click()
        WebDriverWait(driver, 10).until(EC.presence_of_element_located((By.LINK_TEXT, "Watch its delivery")))
        driver.find_element(By.LINK_TEXT, "Watch its delivery").click()
        acknowledged = wait_for_text(driver, "output[data-key=tcp_delivered]", "1")
        check("the funnel reaches acknowledged, live", acknowledged == "1", acknowledged)
        shot(driver, "message")
        message_url = driver.current_url

        # Recall it: the page says so.
        driver.execute_script("window.confirm = () => true;")
        recall = driver.find_element(By.CSS_SELECTOR, "form[action$='/recall'] button")
        recall.click()
        # The answer redirects to the same URL: wait for the page the click left to go, then
        # for the new one's facts (an element read while the page is replaced goes stale).
        WebDriverWait(driver, 10).until(EC.staleness_of(recall))
        WebDriverWait(driver, 10).until(EC.url_to_be(message_url))
        recalled = WebDriverWait(driver, 10, ignored_exceptions=[StaleElementReferenceException]).until(
            lambda d: "Recalled" in d.find_element(By.CSS_SELECTOR, "dl.facts").text
        )
        check("a recalled message says so", recalled)
        check("and it can't be recalled twice", not driver.find_elements(By.CSS_SELECTOR, "form[action$='/recall']"))

        # A test device, and a push to the test devices only.
        driver.get(URL + f"/console/apps/{app_key}/devices/{registration_id}")
        driver.find_element(By.XPATH, "//button[text()='Make it a test device']").click()
        WebDriverWait(driver, 10).until(EC.presence_of_element_located((By.XPATH, "//button[text()='No longer a test device']")))
        shot(driver, "device")
        driver.get(URL + f"/console/apps/{app_key}/compose")
        Select(driver.find_element(By.ID, "audience_kind")).select_by_value("test")
        driver.find_element(By.ID, "alert").send_keys("Only for testers")
        driver.find_element(By.CSS_SELECTOR, "button[value=preview]").click()
        WebDriverWait(driver, 10).until(EC.presence_of_element_located((By.CSS_SELECTOR, "button.send")))
        body = driver.find_element(By.CSS_SELECTOR, "section.preview pre").text
        check("'test devices only' names the test device in the body", registration_id in body and "registration_id" in body, body)
        driver.find_element(By.CSS_SELECTOR, "button.send").click()
        WebDriverWait(driver, 10).until(EC.presence_of_element_located((By.LINK_TEXT, "Watch its delivery")))
        check("the test push is accepted", "for 1 devices" in driver.page_source)

        # The history finds both; the dashboard draws the node.
        driver.get(URL + f"/console/apps/{app_key}/messages?q=testers")
        check("the history finds the message by its text", "Only for testers" in driver.find_element(By.TAG_NAME, "main").text)
        shot(driver, "messages")
        driver.get(URL + "/console/dashboard")
        check("the dashboard lists this node as live", "live" in driver.find_element(By.TAG_NAME, "main").text)
        shot(driver, "dashboard")
        reported = policy_violations(driver)
        check("no policy violation or script error in the admin's pages", not reported, reported)
        weigh(driver, "/console/dashboard", "dashboard")
        weigh(driver, f"/console/apps/{app_key}/compose", "composer")
    finally:
        if device:
            device.terminate()
        driver.quit()


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
              len(blocks) == 3 and '"alert" : "Hello from the console"' in blocks[0] and blocks[1].startswith("curl -X POST") and '"aps"' in blocks[2], blocks)
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

    operator_flow()

    print(f"{'FAILED: ' + ', '.join(failures) if failures else 'all console checks passed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
