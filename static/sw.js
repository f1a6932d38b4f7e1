/* The service worker (served at /sw.js so that its scope is the whole site): shows every notice the server pushes
   ({"title", "body", "url", "tag"}; a newer notice with the same tag, the board's id, replaces the older one) and
   opens its page when it is clicked. Safari revokes a subscription whose pushes show nothing, so every push shows
   a notification, even one that cannot be read. */
"use strict";

self.addEventListener("install", function () { self.skipWaiting(); });
self.addEventListener("activate", function (event) { event.waitUntil(self.clients.claim()); });

self.addEventListener("push", function (event) {
  var notice = {};
  try {
    notice = event.data ? event.data.json() : {};
  } catch (error) {
    notice = {body: event.data ? event.data.text() : ""};
  }
  var title = notice.title || "School status";
  event.waitUntil(self.registration.showNotification(title, {
    body: notice.body || "",
    tag: notice.tag || "notifier",
    renotify: true,
    icon: "/static/icons/icon-192.png",
    badge: "/static/icons/icon-192.png",
    data: {url: notice.url || "/"}
  }));
});

self.addEventListener("notificationclick", function (event) {
  event.notification.close();
  var url = (event.notification.data && event.notification.data.url) || "/";
  event.waitUntil(self.clients.matchAll({type: "window", includeUncontrolled: true}).then(function (windows) {
    for (var i = 0; i < windows.length; i += 1) {
      if (windows[i].url === url && "focus" in windows[i]) { return windows[i].focus(); }
    }
    return self.clients.openWindow(url);
  }));
});
