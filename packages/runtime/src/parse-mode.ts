/** Where facts text is parsed (RunOptions.parse, `--parse`; see facts-parse.ts). */
export const PARSE_MODES = ['host', 'device', 'auto'] as const;
export type ParseMode = (typeof PARSE_MODES)[number];
