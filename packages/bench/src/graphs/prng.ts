/**
 * A small seeded PRNG so generated graphs are identical on every machine and run: xoshiro128** (Blackman and
 * Vigna) seeded through splitmix32, all in 32-bit integer arithmetic.
 */
export class Rng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  constructor(seed: number) {
    // splitmix32 spreads any seed (0 included) over the four state words, so the state is never all zero.
    let x = seed >>> 0;
    const next = (): number => {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s0 = next();
    this.s1 = next();
    this.s2 = next();
    this.s3 = next();
  }

  /** The generator's state, to resume the same stream elsewhere (setState). */
  state(): [number, number, number, number] {
    return [this.s0, this.s1, this.s2, this.s3];
  }

  setState([s0, s1, s2, s3]: readonly [number, number, number, number]): void {
    this.s0 = s0;
    this.s1 = s1;
    this.s2 = s2;
    this.s3 = s3;
  }

  /** Uniform in [0, 2^32). */
  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform in [0, 1), with 32 random bits. */
  nextFloat(): number {
    return this.nextU32() / 2 ** 32;
  }

  /** Uniform integer in [0, bound) for 0 < bound <= 2^32, without modulo bias (rejection sampling). */
  nextInt(bound: number): number {
    for (;;) {
      const r = this.nextU32();
      // The limit is above 2^32 - bound, so most draws pass without computing it (a slow float modulo).
      if (r < 2 ** 32 - bound || r < 2 ** 32 - (2 ** 32 % bound)) {
        // r % bound without the modulo, a call to fmod for r past 2^31 (4x the time of the division, TPC-H's
        // generator's main cost): the rounded quotient can only be one too high, which leaves m negative; m is exact.
        const m = r - Math.floor(r / bound) * bound;
        return m < 0 ? m + bound : m;
      }
    }
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
