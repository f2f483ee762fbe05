// Service worker (generated at build time from web/src/sw.template.js): caches every file of
// this build under a cache named after a hash of their contents, serves them cache-first, so the
// page works with the network off after its first load. A new build has a new name: it installs
// beside the old cache and deletes it when it takes over.
const VERSION = __VERSION__;
const ASSETS = __ASSETS__;
const CACHE = `stepcast-${VERSION}`;

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches.open(CACHE)
      .then((cache) => cache.addAll(ASSETS.map((url) => new Request(url, { cache: 'reload' }))))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys
        .filter((key) => key.startsWith('stepcast-') && key !== CACHE)
        .map((key) => caches.delete(key))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET' || new URL(request.url).origin !== self.location.origin) return;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    const hit = await cache.match(request, { ignoreSearch: request.mode === 'navigate' });
    if (hit) return hit;
    try {
      return await fetch(request);
    } catch (err) {
      // Offline and not cached: a navigation still gets the page.
      if (request.mode === 'navigate') {
        const page = await cache.match('./');
        if (page) return page;
      }
      throw err;
    }
  })());
});
