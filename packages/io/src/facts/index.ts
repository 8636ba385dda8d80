export { FACTS_EXTENSIONS, loadFactsFile, loadFactsFileInto } from './file.js';
export { loadFactsDir, loadEach, loadFactsDirInto, loadKeptColumns, type FactsFileLoader } from './dir.js';
export { FactsCache } from './host-cache.js';
export { EncodedFacts, EncodedRelation, StringInterner, columnTypes, factsColumns, stringWordOffsets } from './encoded.js';
