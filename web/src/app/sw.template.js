// Service worker (generated at build time from web/src/app/sw.template.js): caches the page's
// files of this build under a cache named after a hash of their contents, serves them
// cache-first, so the page works with the network off after its first load. The documentation
// embed's files (the examples page, the element) join the cache when first fetched. A new build
// has a new name: it installs beside the old cache and deletes it when it takes over.
// The precache goes through the HTTP cache (the page registers this once the engine is in): the
// files the page has loaded are not downloaded again. That is safe across builds: hashed files
// never change under their name, and the server sends the others with no-cache (revalidated).
// The page's code that no first paint needs (LATER: cards loaded on first use) is no part of a
// first visit: it is cached when the page first loads it, and all of it on the next visit the
// service worker serves, so the page works offline from then on.
const VERSION = __VERSION__;
const ASSETS = __ASSETS__;
const LATER = __LATER__;
const CACHE = `stepcast-${VERSION}`;

/** A page's folder address (…/examples/ for …/examples/index.html), under which it is cached; else the URL. */
function folderOf(url) {
  const u = new URL(url);
  if (u.pathname.endsWith('/index.html')) u.pathname = u.pathname.slice(0, -'index.html'.length);
  return u.href;
}

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches.open(CACHE)
      .then((cache) => cache.addAll(ASSETS))
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

/** Caches the files of LATER not yet cached (in the background of a visit; offline, the next one). */
async function cacheLater() {
  const cache = await caches.open(CACHE);
  await Promise.all(LATER.map(async (url) => (await cache.match(url)) || cache.add(url).catch(() => {})));
}

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET' || new URL(request.url).origin !== self.location.origin) return;
  if (request.mode === 'navigate') event.waitUntil(cacheLater());
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    const hit = await cache.match(request, { ignoreSearch: request.mode === 'navigate' }) ??
      await cache.match(folderOf(request.url), { ignoreSearch: request.mode === 'navigate' });
    if (hit) return hit;
    try {
      const response = await fetch(request);
      // The embed's files, fetched by a documentation page, and the page's LATER: kept for a visit offline.
      if (response.ok && response.type === 'basic') await cache.put(request, response.clone());
      return response;
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
