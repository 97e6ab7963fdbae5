package scipis.bench;

import java.io.IOException;
import org.apache.lucene.analysis.Tokenizer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.analysis.tokenattributes.OffsetAttribute;

/**
 * The scipis {@code word} tokenizer, in chars: a token char is ASCII
 * [A-Za-z0-9_] or any char >= 0x80; every other char delimits; tokens are
 * maximal runs, ASCII letters lower-cased (nothing else), runs longer than
 * 255 chars cut into 255-char pieces.
 *
 * <p>The benchmark reads files as ISO-8859-1, so one char is one byte and
 * this is exactly scipis's byte tokenizer (same token boundaries, counts and
 * 255-byte cuts); with UTF-8 decoding it would differ only for non-ASCII
 * runs (counted in chars, not bytes), which the generated corpus has none of.
 */
public final class LogTokenizer extends Tokenizer {
  public static final int MAX_TOKEN = 255;
  private static final boolean[] ASCII_TOKEN = new boolean[128];

  static {
    for (int c = 0; c < 128; c++) {
      ASCII_TOKEN[c] =
          (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    }
  }

  private final CharTermAttribute termAtt = addAttribute(CharTermAttribute.class);
  private final OffsetAttribute offsetAtt = addAttribute(OffsetAttribute.class);
  private final char[] buf = new char[16384];
  private int len; // chars in buf
  private int pos; // next char in buf
  private int bufStart; // offset of buf[0] in the whole input
  private boolean eof;

  private boolean fill() throws IOException {
    if (eof) return false;
    bufStart += len;
    pos = 0;
    len = 0;
    while (len == 0) {
      int n = input.read(buf, 0, buf.length);
      if (n < 0) {
        eof = true;
        return false;
      }
      len = n;
    }
    return true;
  }

  @Override
  public boolean incrementToken() throws IOException {
    clearAttributes();
    char[] term = termAtt.buffer();
    if (term.length < MAX_TOKEN) term = termAtt.resizeBuffer(MAX_TOKEN);
    int tlen = 0;
    int start = -1;
    for (; ; ) {
      if (pos >= len && !fill()) break;
      char c = buf[pos];
      boolean tok = c >= 128 || ASCII_TOKEN[c];
      if (tok) {
        if (tlen == 0) start = bufStart + pos;
        term[tlen++] = (c >= 'A' && c <= 'Z') ? (char) (c + 32) : c;
        pos++;
        if (tlen == MAX_TOKEN) break;
      } else {
        pos++;
        if (tlen > 0) break;
      }
    }
    if (tlen == 0) return false;
    termAtt.setLength(tlen);
    offsetAtt.setOffset(correctOffset(start), correctOffset(start + tlen));
    return true;
  }

  @Override
  public void end() throws IOException {
    super.end();
    int fin = correctOffset(bufStart + len);
    offsetAtt.setOffset(fin, fin);
  }

  @Override
  public void reset() throws IOException {
    super.reset();
    len = 0;
    pos = 0;
    bufStart = 0;
    eof = false;
  }
}
