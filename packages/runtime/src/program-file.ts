/** The compiled-program file (`vixen compile -o PROG.json`): versioned KIR plus its WGSL, validated with zod on load. */
import { z } from 'zod';
import type { KernelShaders } from '@vixen/codegen-wgsl';
import type { PrintLayout, SouffleIo } from '@vixen/frontend';
import { parseKir, serializeKir, type KirProgram } from '@vixen/kernel-ir';
import { VixenError } from '@vixen/queryplan';

export const PROGRAM_FORMAT = 'vixen-program';
export const PROGRAM_VERSION = 1;

const printLayoutSchema: z.ZodType<PrintLayout> = z.lazy(() =>
  z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('value') }),
    z.object({ kind: z.literal('record'), fields: z.array(printLayoutSchema) }),
    z.object({ kind: z.literal('adt'), branches: z.array(z.object({ name: z.string(), fields: z.array(printLayoutSchema) })) }),
  ]),
);

const souffleIoSchema = z.object({
  inputs: z.record(z.string(), z.object({ filename: z.string().min(1), delimiter: z.string().min(1), records: z.array(printLayoutSchema).optional() })),
  outputs: z.record(
    z.string(),
    z.array(
      z.discriminatedUnion('kind', [
        z.object({ kind: z.literal('file'), filename: z.string().min(1), delimiter: z.string().min(1) }),
        z.object({ kind: z.literal('stdout'), delimiter: z.string().min(1) }),
        z.object({ kind: z.literal('size') }),
      ]),
    ),
  ),
  /** How record and ADT columns print (absent where the program has none). */
  records: z.record(z.string(), z.array(printLayoutSchema)).optional(),
});

const programFileSchema = z.object({
  format: z.literal(PROGRAM_FORMAT),
  version: z.literal(PROGRAM_VERSION),
  kir: z.unknown(),
  shaders: z.array(z.record(z.string(), z.string())),
  /** A Soufflé program's IO directives (optional: older files and LogiQL programs have none). */
  souffleIo: souffleIoSchema.optional(),
});

export type ProgramFile = z.infer<typeof programFileSchema>;

export function serializeProgram(kir: KirProgram, shaders: readonly KernelShaders[], souffleIo?: SouffleIo): ProgramFile {
  return { format: PROGRAM_FORMAT, version: PROGRAM_VERSION, kir: serializeKir(kir), shaders: [...shaders], ...(souffleIo ? { souffleIo } : {}) };
}

export function parseProgramFile(json: unknown, file: string): { kir: KirProgram; shaders: KernelShaders[]; souffleIo?: SouffleIo } {
  const header = z.object({ format: z.literal(PROGRAM_FORMAT), version: z.number() }).safeParse(json);
  if (header.success && header.data.version !== PROGRAM_VERSION) {
    throw new VixenError({
      severity: 'error',
      message: `${file}: program file version ${header.data.version} is not supported (this Vixen reads version ${PROGRAM_VERSION}); recompile it with vixen compile`,
    });
  }
  const parsed = programFileSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new VixenError({ severity: 'error', message: `${file}: not a Vixen ${PROGRAM_VERSION} program file: ${issues}` });
  }
  let kir: KirProgram;
  try {
    kir = parseKir(parsed.data.kir);
  } catch (e) {
    if (e instanceof VixenError) throw new VixenError({ severity: 'error', message: `${file}: invalid kernel IR: ${e.message}` });
    throw e;
  }
  if (parsed.data.shaders.length !== kir.kernels.length) {
    throw new VixenError({
      severity: 'error',
      message: `${file}: ${kir.kernels.length} kernels but ${parsed.data.shaders.length} shader sets`,
    });
  }
  return { kir, shaders: parsed.data.shaders, ...(parsed.data.souffleIo ? { souffleIo: parsed.data.souffleIo } : {}) };
}
