// The settings page's "Allow notifications on this phone" (templates/partials/push_settings.html):
// registers the service worker, asks the browser for a push subscription with the server's
// VAPID key, and posts it to /g/<gid>/push/subscribe with the page's CSRF token.
(function () {
  const box = document.getElementById("push");
  if (!box) return;
  const on = box.querySelector("[data-push=on]");
  const off = box.querySelector("[data-push=off]");
  const said = box.querySelector("[data-push=said]");
  const say = (text) => { said.textContent = text; };
  if (!("serviceWorker" in navigator) || !("PushManager" in window)) {
    say(box.dataset.unsupported);
    on.disabled = true;
    return;
  }
  const key = () => {
    const text = box.dataset.key.replace(/-/g, "+").replace(/_/g, "/");
    const raw = atob(text + "===".slice((text.length + 3) % 4));
    return Uint8Array.from(raw, (c) => c.charCodeAt(0));
  };
  const post = async (url, body) => {
    const answer = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "Content-Type": "application/json",
        "Accept": "application/json",
        "X-CSRFToken": box.dataset.csrf,
      },
      body: JSON.stringify(body),
    });
    const data = await answer.json().catch(() => ({}));
    say((data.message || (data.error && data.error.message)) || box.dataset.failed);
    return answer.ok;
  };
  on.addEventListener("click", async () => {
    try {
      if ((await Notification.requestPermission()) !== "granted") { say(box.dataset.denied); return; }
      const registration = await navigator.serviceWorker.register("/sw.js");
      await navigator.serviceWorker.ready;
      const subscription = await registration.pushManager.subscribe({
        userVisibleOnly: true, applicationServerKey: key(),
      });
      await post(box.dataset.subscribe, subscription.toJSON());
    } catch (e) { say(box.dataset.failed); }
  });
  off.addEventListener("click", async () => {
    try {
      const registration = await navigator.serviceWorker.getRegistration("/");
      const subscription = registration && await registration.pushManager.getSubscription();
      if (!subscription) { say(box.dataset.none); return; }
      await post(box.dataset.unsubscribe, { endpoint: subscription.endpoint });
      await subscription.unsubscribe();
    } catch (e) { say(box.dataset.failed); }
  });
})();
