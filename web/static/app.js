/* I'm the Boss!: small helpers for htmx. The pages work without this file.
   The Content-Security-Policy allows no inline script and no eval, so everything lives here:
   htmx is configured (templates/base.html) with allowEval off, and its trigger filters
   ("every 15s [expr]"), which need eval, are replaced by the listener below. */

/* True when the player is not filling in a form in the live part of the page: nothing focused
   there and no typed price, text or ticked card. */
function ibIdle() {
  var live = document.getElementById("live");
  if (!live) return false;
  var active = document.activeElement;
  if (active && live.contains(active) && active.matches("input, select, textarea")) return false;
  var inputs = live.querySelectorAll("form input[type=number], form textarea, form input[type=checkbox]");
  for (var i = 0; i < inputs.length; i++) {
    var el = inputs[i];
    if (el.type === "checkbox" ? el.checked : el.value) return false;
  }
  return true;
}

/* The game page refreshes its live part every 15 s; skip a refresh while the player is filling
   in a form there, so a half-typed price or a ticked card is not wiped. */
document.addEventListener("htmx:beforeRequest", function (event) {
  var elt = event.detail && event.detail.elt;
  if (elt && elt.id === "live" && !ibIdle()) event.preventDefault();
});

/* A zone's offset from UTC now ("UTC+8"; "" for a zone the browser does not know). */
function ibOffset(zone) {
  try {
    var parts = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "shortOffset" })
      .formatToParts(new Date());
    var name = parts.filter(function (p) { return p.type === "timeZoneName"; })[0];
    return name ? name.value.replace(/^GMT/, "UTC") : "UTC";
  } catch (e) { return ""; }
}

/* A zone as the pages write it (imtheboss.web.say.display.zone_text), never its raw name: its
   offset from UTC now ("UTC+8"), and on an English page its city ("UTC+8, Taipei"). */
function ibZoneText(zone) {
  var label = ibOffset(zone);
  if (!label) return "UTC";
  var city = zone.indexOf("/") > 0 ? zone.split("/").pop().replace(/_/g, " ") : "";
  var english = (document.documentElement.lang || "en").slice(0, 2) === "en";
  return city && english && zone.indexOf("Etc/") !== 0 ? label + ", " + city : label;
}

/* The game page offers to show times in the browser's own time zone when it is not the one the
   seat's pages use; "Keep" is remembered in this browser (per game and zone kept). */
document.addEventListener("DOMContentLoaded", function () {
  var form = document.getElementById("zone-guess");
  if (!form || !window.Intl) return;
  var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  var kept = "ib-zone-kept:" + form.dataset.game;
  // a zone of the same offset now (Asia/Taipei, Asia/Shanghai: both UTC+8) shows the same times
  var offset = ibOffset(zone);
  if (!zone || zone === form.dataset.zone || (offset && offset === ibOffset(form.dataset.zone))) return;
  try {
    if (window.localStorage.getItem(kept) === form.dataset.zone) return;
  } catch (e) { /* no storage: offer anyway */ }
  form.elements.timezone.value = zone;
  form.querySelector("[data-browser-zone]").textContent = ibZoneText(zone);
  form.hidden = false;
  form.querySelector("[data-keep]").addEventListener("click", function () {
    try { window.localStorage.setItem(kept, form.dataset.zone); } catch (e) { /* nothing kept */ }
    form.hidden = true;
  });
});

/* Zone pickers (partials/macros.html zone_list): the browser's own zone first in the list, and
   an empty box marked data-guess-zone (a player's defaults, the create form) filled with it. */
document.addEventListener("DOMContentLoaded", function () {
  if (!window.Intl) return;
  var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (!zone) return;
  var list = document.getElementById("zone-list");
  if (list) {
    var own = list.querySelector('option[value="' + zone.replace(/"/g, "") + '"]');
    if (own) list.insertBefore(own, list.firstChild);
  }
  document.querySelectorAll("input[data-guess-zone]").forEach(function (input) {
    if (!input.value) input.value = zone;
  });
});

/* My games without a zone of the player's own: the times are written in the browser's zone
   (as the server writes them: "Sun 2026-03-01 17:00 UTC+8"), and the page says so. */
function ibBrowserTime(iso, zone, lang) {
  var at = new Date(iso);
  var parts = {};
  new Intl.DateTimeFormat("en-GB", {
    timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit",
    hour: "2-digit", minute: "2-digit", hourCycle: "h23"
  }).formatToParts(at).forEach(function (p) { parts[p.type] = p.value; });
  var day = new Intl.DateTimeFormat(lang, { timeZone: zone, weekday: "short" }).format(at);
  return day + " " + parts.year + "-" + parts.month + "-" + parts.day + " " + parts.hour + ":" +
    parts.minute + " " + ibOffset(zone);
}

document.addEventListener("DOMContentLoaded", function () {
  var said = document.querySelector("[data-browser-zone-said]");
  if (!said || !window.Intl) return;
  var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (!zone || !ibOffset(zone)) return;
  var lang = document.documentElement.lang || "en";
  document.querySelectorAll("time[data-browser-time]").forEach(function (el) {
    el.textContent = ibBrowserTime(el.getAttribute("datetime"), zone, lang);
  });
  said.textContent = said.textContent.replace("ZONE", ibZoneText(zone));
  said.hidden = false;
  document.querySelector("[data-zone-said]").hidden = true;
});

/* After an in-page action (a form posted into #live): the confirmation, if one is asked, is
   scrolled onto the screen and focused (its "Yes" is the next Tab); otherwise focus goes to
   the refusal, else to the notices, else to what is asked of the player, so it never falls to
   the page's body. The notices and the refusal are also read out by the one live region that
   stays on the page (#announce, templates/game.html), since #live is replaced each time. */
function ibFocus(el) {
  if (!el.hasAttribute("tabindex")) el.setAttribute("tabindex", "-1");
  el.scrollIntoView({ block: "start" });
  el.focus({ preventScroll: true });
}

document.addEventListener("htmx:afterSettle", function (event) {
  var elt = event.detail && event.detail.requestConfig && event.detail.requestConfig.elt;
  var live = document.getElementById("live");
  if (!live || !elt || elt.id === "live" || elt.tagName !== "FORM") return;
  var confirm = live.querySelector("#confirm");
  var said = live.querySelector(".error-box") || live.querySelector(".notice");
  var announce = document.getElementById("announce");
  if (announce) announce.textContent = confirm ? "" : (said ? said.textContent.trim() : "");
  var target = confirm || said || live.querySelector("#asked, #actions, h2");
  if (target) ibFocus(target);
});
