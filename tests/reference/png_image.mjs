// A PNG made in memory for the image checks (openai_image_answer_check.mjs,
// openai_qwen_image_check.mjs, openai_mistral3_image_check.mjs): RGB, 8 bits
// a channel, unfiltered rows, base64 for a data: URL.
import { crc32, deflateSync } from 'node:zlib';

// A width x height RGB PNG whose pixels `colour(x, y)` gives.
export function png(width, height, colour) {
  const chunk = (type, data) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bits per channel
  header[9] = 2; // RGB
  const rows = [];
  for (let y = 0; y < height; ++y) {
    rows.push(Buffer.from([0])); // no filter
    for (let x = 0; x < width; ++x) rows.push(Buffer.from(colour(x, y)));
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]).toString('base64');
}
