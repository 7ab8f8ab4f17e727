/** One problem found in an agent file. */
export interface Finding {
  file: string;
  /** `info`: a decision worth saying (`validate` prints it), never a failure. */
  severity: 'error' | 'warning' | 'info';
  field?: string;
  message: string;
  line?: number;
  column?: number;
}
