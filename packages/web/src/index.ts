/**
 * The browser playground: its build and a local server for it. The gallery is `@vixen/web/gallery` (the page and the
 * browser test import it): it imports the examples' text with `?raw`, which only a bundler or Vite resolves.
 */
export { buildSite, SITE_FILES, type BuildSiteResult } from './build.js';
export { serveSite, type Site } from './serve.js';
export { factsFileRelation, parseFacts } from './facts.js';
