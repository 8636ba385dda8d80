/** Progress of a facts load or a store import, in bytes of the files read, for a caller to show (the CLI's bar). */
export interface LoadProgress {
  /** The relation being read now. */
  relation: string;
  /** Bytes read so far, over every file of the load. */
  bytesDone: number;
  /** Bytes of every file the load reads. */
  bytesTotal: number;
}

export type LoadProgressListener = (progress: LoadProgress) => void;

/** Counts bytes done out of `bytesTotal` and tells `listener` (when there is one) after each step. */
export function progressCounter(bytesTotal: number, listener: LoadProgressListener | undefined): (relation: string, bytes: number) => void {
  let bytesDone = 0;
  return (relation, bytes) => {
    bytesDone += bytes;
    listener?.({ relation, bytesDone, bytesTotal });
  };
}
