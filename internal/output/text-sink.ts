/** Where rendered text goes: stdout, stderr, a terminal or a file stream. */
export interface TextSink {
  write(text: string): unknown;
}
