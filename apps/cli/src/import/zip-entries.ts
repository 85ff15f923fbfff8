import type { Readable } from 'node:stream';
import yauzl from 'yauzl';

export interface ZipEntry {
  name: string;
  compressedSize: number;
  /** The entry's bytes, inflated from the archive (still gzip if the file inside is). */
  stream: Readable;
}

const openZip = (path: string) =>
  new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.open(path, { lazyEntries: true, autoClose: false, decodeStrings: true, validateEntrySizes: true }, (error, zip) =>
      error ? reject(error) : resolve(zip),
    ),
  );

/** Every entry of the central directory (names and offsets only: nothing is inflated yet). */
const listEntries = (zip: yauzl.ZipFile) =>
  new Promise<yauzl.Entry[]>((resolve, reject) => {
    const entries: yauzl.Entry[] = [];
    zip.on('entry', (entry: yauzl.Entry) => {
      entries.push(entry);
      zip.readEntry();
    });
    zip.once('end', () => resolve(entries));
    zip.once('error', reject);
    zip.readEntry();
  });

const openEntry = (zip: yauzl.ZipFile, entry: yauzl.Entry) =>
  new Promise<Readable>((resolve, reject) => zip.openReadStream(entry, (error, stream) => (error ? reject(error) : resolve(stream))));

/**
 * The files of a zip archive in name order (folders skipped), one open at a time. yauzl reads
 * the central directory and inflates each entry as a stream, checking its size and CRC, so an
 * export of many gigabytes is never held in memory.
 */
export async function* readZipEntries(path: string): AsyncGenerator<ZipEntry> {
  const zip = await openZip(path);
  try {
    const entries = (await listEntries(zip))
      .filter((entry) => !entry.fileName.endsWith('/'))
      .sort((a, b) => (a.fileName < b.fileName ? -1 : a.fileName > b.fileName ? 1 : 0));
    for (const entry of entries) {
      yield { name: entry.fileName, compressedSize: entry.compressedSize, stream: await openEntry(zip, entry) };
    }
  } finally {
    zip.close();
  }
}
