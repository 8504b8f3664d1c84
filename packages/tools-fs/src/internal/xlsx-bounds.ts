import { inflateRawSync } from 'node:zlib';

/** One member of a zip archive, as its central directory describes it. */
export interface ZipMember {
  name: string;
  /** 0 stored, 8 deflated; others are not used by .xlsx files. */
  method: number;
  compressedSize: number;
  uncompressedSize: number;
  localHeaderOffset: number;
}

/** Why a workbook is not loaded: what to tell the model, in one sentence. */
export class WorkbookBoundsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkbookBoundsError';
  }
}

const EOCD_SIGNATURE = 0x06054b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;
const ZIP64_MARK = 0xffffffff;

const megabytes = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MB`;

/** The members of a zip archive, read from its central directory (nothing is inflated). */
export function zipMembers(bytes: Buffer, file: string): ZipMember[] {
  // The end-of-central-directory record is in the last 22 bytes plus at most 64 KiB of comment.
  const floor = Math.max(0, bytes.length - 22 - 0xffff);
  let eocd = -1;
  for (let offset = bytes.length - 22; offset >= floor; offset -= 1) {
    if (bytes.readUInt32LE(offset) === EOCD_SIGNATURE) {
      eocd = offset;
      break;
    }
  }
  if (eocd === -1) throw new WorkbookBoundsError(`${file} is not a valid .xlsx file (it is not a zip archive)`);
  const count = bytes.readUInt16LE(eocd + 10);
  const directorySize = bytes.readUInt32LE(eocd + 12);
  const directoryOffset = bytes.readUInt32LE(eocd + 16);
  if (directoryOffset === ZIP64_MARK || count === 0xffff) {
    throw new WorkbookBoundsError(
      `${file} is a ZIP64 archive (over 4 GB or 65,535 members), far beyond what read_excel loads`,
    );
  }
  if (directoryOffset + directorySize > bytes.length)
    throw new WorkbookBoundsError(`${file} is not a valid .xlsx file (its zip directory is cut off)`);
  const members: ZipMember[] = [];
  let offset = directoryOffset;
  for (let index = 0; index < count; index += 1) {
    if (offset + 46 > bytes.length || bytes.readUInt32LE(offset) !== CENTRAL_SIGNATURE) {
      throw new WorkbookBoundsError(`${file} is not a valid .xlsx file (its zip directory is damaged)`);
    }
    const nameLength = bytes.readUInt16LE(offset + 28);
    const extraLength = bytes.readUInt16LE(offset + 30);
    const commentLength = bytes.readUInt16LE(offset + 32);
    members.push({
      name: bytes.toString('utf8', offset + 46, offset + 46 + nameLength),
      method: bytes.readUInt16LE(offset + 10),
      compressedSize: bytes.readUInt32LE(offset + 20),
      uncompressedSize: bytes.readUInt32LE(offset + 24),
      localHeaderOffset: bytes.readUInt32LE(offset + 42),
    });
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return members;
}

/**
 * Refuses a workbook that would inflate to more than `maxInflatedBytes`, before any XML is
 * parsed: first by the sizes its zip directory declares, then by inflating each member with its
 * declared size as a hard ceiling (zlib's `maxOutputLength`), so a member that lies about its
 * size is caught after at most that many bytes. Memory stays bounded by the largest member.
 * Returns the total inflated size.
 */
export function checkWorkbookBounds(bytes: Buffer, file: string, maxInflatedBytes: number): number {
  const members = zipMembers(bytes, file);
  const declared = members.reduce((total, member) => total + member.uncompressedSize, 0);
  const largest = members.reduce<ZipMember | undefined>(
    (most, member) => (most === undefined || member.uncompressedSize > most.uncompressedSize ? member : most),
    undefined,
  );
  if (declared > maxInflatedBytes) {
    throw new WorkbookBoundsError(
      `${file} inflates to ${megabytes(declared)} of XML (${megabytes(bytes.length)} compressed; ${largest?.name ?? 'a member'} alone is ${megabytes(largest?.uncompressedSize ?? 0)}), ` +
        `more than read_excel's limit of ${megabytes(maxInflatedBytes)}. Export the sheet you need to CSV (for example with LibreOffice: ` +
        `soffice --headless --convert-to csv FILE) and read that, or split the workbook`,
    );
  }
  for (const member of members) {
    if (member.method !== 0 && member.method !== 8) continue;
    const local = member.localHeaderOffset;
    if (local + 30 > bytes.length || bytes.readUInt32LE(local) !== LOCAL_SIGNATURE) {
      throw new WorkbookBoundsError(`${file} is not a valid .xlsx file (the zip member ${member.name} is damaged)`);
    }
    const start = local + 30 + bytes.readUInt16LE(local + 26) + bytes.readUInt16LE(local + 28);
    const data = bytes.subarray(start, start + member.compressedSize);
    const lie = () =>
      new WorkbookBoundsError(
        `${file} is not a valid .xlsx file: the zip member ${member.name} declares ${member.uncompressedSize} bytes but holds more (a zip bomb?); read_excel does not load it`,
      );
    if (member.method === 0) {
      if (member.compressedSize !== member.uncompressedSize) throw lie();
      continue;
    }
    let inflated: Buffer;
    try {
      // One byte more than declared: inflating past it proves the declaration false.
      inflated = inflateRawSync(data, { maxOutputLength: member.uncompressedSize + 1 });
    } catch (error) {
      if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) throw lie();
      throw new WorkbookBoundsError(
        `${file} is not a valid .xlsx file (the zip member ${member.name} cannot be inflated: ${(error as Error).message})`,
      );
    }
    if (inflated.length > member.uncompressedSize) throw lie();
  }
  return declared;
}
