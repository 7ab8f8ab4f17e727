/**
 * The character sets of HTTP/1.1 fields (RFC 9110 §5), shared by the request head axe writes and
 * the response heads it reads. Each is the inside of a regexp character class.
 */

/** Token characters (RFC 9110 §5.6.2): what a header name is made of. */
export const TCHARS = "!#$%&'*+\\-.^_`|~0-9A-Za-z";
/** A field value's characters (RFC 9110 §5.5): HTAB, SP, visible characters and obs-text; no CR, LF or NUL. */
export const FIELD_CHARS = '\\t\\x20-\\x7e\\x80-\\xff';
/** A field value's characters less SP and HTAB. */
export const VISIBLE_CHARS = '\\x21-\\x7e\\x80-\\xff';

/** A header name. */
export const TOKEN = new RegExp(`^[${TCHARS}]+$`);
/** Any character a field value may not hold. */
export const NOT_FIELD_CHAR = new RegExp(`[^${FIELD_CHARS}]`);
