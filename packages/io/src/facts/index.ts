export { FACTS_EXTENSIONS, factsFormat, loadFactsFile, loadFactsFileInto, type Format } from './file.js';
export { ByteInterner, grow } from './byte-strings.js';
export { loadFactsDir, loadEach, loadFactsDirInto, loadKeptColumns, type FactsFileLoader } from './dir.js';
export { FactsCache } from './host-cache.js';
export { EncodedFacts, EncodedRelation, type DeviceRows, StringInterner, columnTypes, distinctAscending, factsColumns, stringWordOffsets } from './encoded.js';
