/**
 * Parses CSV text (RFC 4180: quoted fields may contain separators, quotes written twice, and
 * newlines; CRLF or LF line ends). A trailing empty line does not make a row.
 */
export function parseCsv(text: string, separator = ','): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  // Whether the current field was written as a quoted field: `""` is a field, even when empty.
  let wasQuoted = false;
  let index = 0;
  while (index < text.length) {
    const character = text[index];
    if (quoted) {
      if (character === '"') {
        if (text[index + 1] === '"') {
          field += '"';
          index += 2;
          continue;
        }
        quoted = false;
      } else {
        field += character;
      }
      index += 1;
      continue;
    }
    if (character === '"' && field === '') {
      quoted = true;
      wasQuoted = true;
    } else if (character === separator) {
      row.push(field);
      field = '';
      wasQuoted = false;
    } else if (character === '\n' || character === '\r') {
      if (character === '\r' && text[index + 1] === '\n') index += 1;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      wasQuoted = false;
    } else {
      field += character;
    }
    index += 1;
  }
  if (field !== '' || wasQuoted || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}
