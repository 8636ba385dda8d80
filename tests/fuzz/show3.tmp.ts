import { compile } from '@vixen/runtime';
const p = compile(`e(x, y) -> int64(x), int32(y).
e(-9223372036854775808, -2147483648). e(9223372036854775807L, 2147483647).
q(x) <- e(x, y), y < -2147483647, x <= -9223372036854775808L.
r(x, y) <- e(x, y), x > -9223372036854775808.
`, { filename: 'a.logic' });
console.log(await p.interpret(), (await p.run()).relations);
