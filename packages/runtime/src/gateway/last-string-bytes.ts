import { jsonStringBytes } from '../scheduler/request-size.js';

/** The JSON byte length of a string, remembered for the last string asked about. */
export class LastStringBytes {
  private last: string | undefined = undefined;
  private bytes = 0;

  of(text: string): number {
    if (text !== this.last) {
      this.bytes = jsonStringBytes(text, Infinity);
      this.last = text;
    }
    return this.bytes;
  }
}
