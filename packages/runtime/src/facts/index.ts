export { FACTS_EXTENSIONS, loadFactsFile } from './file.js';
export { loadFactsDir } from './dir.js';
