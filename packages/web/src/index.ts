/** The browser playground: its build, a local server for it, and its gallery (which the browser test runs). */
export { buildSite, SITE_FILES, type BuildSiteResult } from './build.js';
export { serveSite, type Site } from './serve.js';
export { GALLERY, type GalleryProgram } from './gallery.js';
export { factsFileRelation, parseFacts } from './facts.js';
