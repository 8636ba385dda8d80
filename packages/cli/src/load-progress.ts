/**
 * The facts load bar: the relation being read, MB done of the total, MB/s and an estimate, drawn with cli-progress
 * on a terminal once a load has taken a second (a quick load shows nothing), and cleared when the load is done.
 */
import { SingleBar } from 'cli-progress';
import type { LoadProgress } from '@vixen/io';

const mb = (bytes: number): string => (bytes / 1e6).toFixed(0);

export function loadProgressBar(stream: NodeJS.WriteStream): { update: (p: LoadProgress) => void; done: () => void } {
  const started = performance.now();
  let bar: SingleBar | undefined;
  const done = (): void => {
    bar?.stop();
    bar = undefined;
  };
  return {
    update({ relation, bytesDone, bytesTotal }) {
      const seconds = (performance.now() - started) / 1000;
      if (bytesDone >= bytesTotal) return done();
      if (!bar && seconds < 1) return;
      const payload = { relation, done: mb(bytesDone), all: mb(bytesTotal), speed: (bytesDone / 1e6 / seconds).toFixed(0) };
      if (!bar) {
        bar = new SingleBar({ format: '{relation} {bar} {done}/{all} MB, {speed} MB/s, eta {eta_formatted}', stream, hideCursor: true, clearOnComplete: true });
        bar.start(bytesTotal, bytesDone, payload);
      } else bar.update(bytesDone, payload);
    },
    done,
  };
}
