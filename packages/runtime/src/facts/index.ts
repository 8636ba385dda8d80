export { FACTS_EXTENSIONS, loadFactsFile, loadFactsFileInto } from './file.js';
export { loadFactsDir, loadFactsDirInto } from './dir.js';
export { EncodedFacts, EncodedRelation, StringInterner, columnTypes, factsColumns, stringWordOffsets } from './encoded.js';
