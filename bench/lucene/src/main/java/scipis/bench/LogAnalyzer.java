package scipis.bench;

import org.apache.lucene.analysis.Analyzer;

/** {@link LogTokenizer} alone: no filter (lower-casing is in the tokenizer). */
public final class LogAnalyzer extends Analyzer {
  @Override
  protected TokenStreamComponents createComponents(String fieldName) {
    return new TokenStreamComponents(new LogTokenizer());
  }
}
