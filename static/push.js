/* "Get alerts on this device" (templates/push/_control.html): registers /sw.js, asks permission, subscribes with
   the server's key and sends the subscription with the boards followed and the page's language. A device has one
   subscription, whose boards the server replaces on each POST: the boards this device already follows are kept in
   localStorage and sent with the page's, so subscribing on a second board's page adds it. Progressive
   enhancement: without Web Push the control stays hidden and the email/text sign-up remains. */
(function () {
  "use strict";
  var box = document.getElementById("push");
  if (!box) { return; }
  var token = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";
  var status = box.querySelector('[data-push="status"]');
  var subscribeButton = box.querySelector('[data-push="subscribe"]');
  var unsubscribeButton = box.querySelector('[data-push="unsubscribe"]');
  var ios = /iPad|iPhone|iPod/.test(navigator.userAgent) ||
    (navigator.platform === "MacIntel" && navigator.maxTouchPoints > 1);
  var standalone = window.navigator.standalone === true ||
    (window.matchMedia && window.matchMedia("(display-mode: standalone)").matches);
  var STORED = "notifier-push-boards";
  var pageBoards = JSON.parse(box.getAttribute("data-boards"));
  var supported = "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;

  if (!supported) {
    if (ios && !standalone) {  // Safari on iOS 16.4+ offers push only to a site opened from the home screen
      box.hidden = false;
      box.querySelector('[data-push="ios"]').hidden = false;
      subscribeButton.hidden = true;
    }
    return;
  }

  function say(kind) { status.textContent = status.getAttribute("data-" + kind) || ""; }

  function keyBytes(base64url) {
    var padded = (base64url + "===".slice((base64url.length + 3) % 4)).replace(/-/g, "+").replace(/_/g, "/");
    var raw = window.atob(padded);
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i += 1) { bytes[i] = raw.charCodeAt(i); }
    return bytes;
  }

  function send(method, body) {
    return fetch(box.getAttribute("data-subscriptions-url"), {
      method: method, credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-CSRFToken": token},
      body: JSON.stringify(body)
    }).then(function (response) {
      if (!response.ok) { throw new Error("HTTP " + response.status); }
      return response;
    });
  }

  function followed() {
    try { return JSON.parse(window.localStorage.getItem(STORED) || "{}") || {}; } catch (error) { return {}; }
  }

  function remember(boards) {
    try { window.localStorage.setItem(STORED, JSON.stringify(boards)); } catch (error) { /* private mode */ }
  }

  function merged() {  // the boards this device follows, with this page's added
    var boards = followed();
    Object.keys(pageBoards).forEach(function (id) {
      var panels = boards[id] || [];
      pageBoards[id].forEach(function (panel) { if (panels.indexOf(panel) < 0) { panels.push(panel); } });
      boards[id] = panels;
    });
    return boards;
  }

  function covered() {  // this device already follows every board and panel of this page
    var boards = followed();
    return Object.keys(pageBoards).every(function (id) {
      return pageBoards[id].every(function (panel) { return (boards[id] || []).indexOf(panel) >= 0; });
    });
  }

  function showSubscribed(yes) {
    subscribeButton.hidden = yes && covered();
    unsubscribeButton.hidden = !yes;
  }

  function registration() {
    return navigator.serviceWorker.register(box.getAttribute("data-worker-url"), {scope: "/"})
      .then(function () { return navigator.serviceWorker.ready; });
  }

  function subscribe() {
    subscribeButton.disabled = true;
    Notification.requestPermission().then(function (permission) {
      if (permission !== "granted") { throw new Error(permission); }
      return Promise.all([registration(), fetch(box.getAttribute("data-key-url")).then(function (r) { return r.json(); })]);
    }).then(function (both) {
      return both[0].pushManager.subscribe({userVisibleOnly: true, applicationServerKey: keyBytes(both[1].public_key)});
    }).then(function (subscription) {
      var boards = merged();
      return send("POST", {subscription: subscription.toJSON(), boards: boards,
                           language: box.getAttribute("data-language")}).then(function () { remember(boards); });
    }).then(function () {
      showSubscribed(true);
      say("subscribed");
    }).catch(function (error) {
      say(error && error.message === "denied" ? "denied" : "failed");
    }).then(function () { subscribeButton.disabled = false; });
  }

  function unsubscribe() {
    unsubscribeButton.disabled = true;
    registration().then(function (reg) { return reg.pushManager.getSubscription(); }).then(function (subscription) {
      if (!subscription) { return null; }
      return send("DELETE", {endpoint: subscription.endpoint}).then(function () { return subscription.unsubscribe(); });
    }).then(function () {
      try { window.localStorage.removeItem(STORED); } catch (error) { /* private mode */ }
      showSubscribed(false);
      say("unsubscribed");
    }).catch(function () { say("failed"); }).then(function () { unsubscribeButton.disabled = false; });
  }

  box.hidden = false;
  subscribeButton.addEventListener("click", subscribe);
  unsubscribeButton.addEventListener("click", unsubscribe);
  navigator.serviceWorker.getRegistration("/").then(function (reg) {
    return reg ? reg.pushManager.getSubscription() : null;
  }).then(function (subscription) { showSubscribed(Boolean(subscription)); }).catch(function () {});
}());
