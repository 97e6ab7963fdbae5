package scipis.bench;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.BoostQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.similarities.ClassicSimilarity;
import org.apache.lucene.store.FSDirectory;

/**
 * Top-k queries against an IndexRows index, for bench/am.
 *
 * <pre>
 * java -cp scipis-bench-lucene.jar scipis.bench.SearchRows --index DIR --queries q.tsv
 *      --out lat.tsv [--warmup 1] [--passes 3] [--k 10] [--pass-budget 600]
 * </pre>
 *
 * <p>q.tsv: qid, kind, terms (space separated), ts_lo, ts_hi (epoch seconds, half-open
 * [lo, hi); both empty: no filter). A query is the terms through LogAnalyzer, one TermQuery
 * per distinct term, OR-ed (BooleanQuery SHOULD; a repeated term boosted by its count, as
 * Search does), scored by ClassicSimilarity; with a window it becomes MUST(that query) +
 * FILTER(LongPoint.newRangeQuery(ts, lo, hi - 1)), so the filter never scores. The top k hits'
 * stored ids are read. Each query is timed with System.nanoTime in one thread, query building
 * and id fetching included, after --warmup full passes; the query cache is off. After a
 * measured pass that took longer than --pass-budget seconds no further pass is run.
 *
 * <p>Writes --out (TSV: pass, qid, us, nrows, ids, scores; ids and scores space separated).
 */
public final class SearchRows {
  record Q(String id, String kind, String text, Long lo, Long hi) {}

  public static void main(String[] args) throws Exception {
    Path index = null, queries = null, out = null;
    int warmup = 1, passes = 3, k = 10;
    double budget = 600;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--index" -> index = Paths.get(args[++i]);
        case "--queries" -> queries = Paths.get(args[++i]);
        case "--out" -> out = Paths.get(args[++i]);
        case "--warmup" -> warmup = Integer.parseInt(args[++i]);
        case "--passes" -> passes = Integer.parseInt(args[++i]);
        case "--k" -> k = Integer.parseInt(args[++i]);
        case "--pass-budget" -> budget = Double.parseDouble(args[++i]);
        default -> usage();
      }
    }
    if (index == null || queries == null || out == null) usage();

    List<Q> qs = new ArrayList<>();
    for (String line : Files.readAllLines(queries, StandardCharsets.UTF_8)) {
      String[] f = line.split("\t", -1);
      if (f.length < 3 || f[0].equals("qid")) continue;
      Long lo = f.length > 4 && !f[3].isEmpty() ? Long.parseLong(f[3]) : null;
      Long hi = f.length > 4 && !f[4].isEmpty() ? Long.parseLong(f[4]) : null;
      qs.add(new Q(f[0], f[1], f[2], lo, hi));
    }

    Analyzer analyzer = new LogAnalyzer();
    try (var dir = FSDirectory.open(index);
        DirectoryReader reader = DirectoryReader.open(dir);
        BufferedWriter w = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
      IndexSearcher searcher = new IndexSearcher(reader);
      searcher.setSimilarity(new ClassicSimilarity());
      searcher.setQueryCache(null);
      Set<String> idOnly = Set.of(IndexRows.ID);
      w.write("pass\tqid\tus\tnrows\tids\tscores\n");
      for (int pass = 1 - warmup; pass <= passes; pass++) {
        long passStart = System.nanoTime();
        for (Q q : qs) {
          long t0 = System.nanoTime();
          Query query = build(analyzer, q);
          TopDocs td = searcher.search(query, k);
          StoredFields sf = searcher.storedFields();
          long[] ids = new long[td.scoreDocs.length];
          float[] scores = new float[td.scoreDocs.length];
          for (int j = 0; j < td.scoreDocs.length; j++) {
            ScoreDoc sd = td.scoreDocs[j];
            ids[j] = sf.document(sd.doc, idOnly).getField(IndexRows.ID).numericValue().longValue();
            scores[j] = sd.score;
          }
          long t1 = System.nanoTime();
          if (pass >= 1) {
            StringBuilder sb = new StringBuilder();
            sb.append(pass).append('\t').append(q.id()).append('\t')
                .append((t1 - t0) / 1000.0).append('\t').append(ids.length).append('\t');
            for (int j = 0; j < ids.length; j++) sb.append(j == 0 ? "" : " ").append(ids[j]);
            sb.append('\t');
            for (int j = 0; j < ids.length; j++) sb.append(j == 0 ? "" : " ").append(scores[j]);
            w.write(sb.append('\n').toString());
          }
        }
        double secs = (System.nanoTime() - passStart) / 1e9;
        if (pass >= 1 && pass < passes && secs > budget) {
          System.err.printf("SearchRows: pass %d took %.1f s > %.0f s: no more passes%n", pass, secs, budget);
          break;
        }
      }
    }
  }

  static Query build(Analyzer analyzer, Q q) throws IOException {
    Query text = terms(analyzer, q.text());
    if (q.lo() == null) return text;
    return new BooleanQuery.Builder()
        .add(text, BooleanClause.Occur.MUST)
        .add(LongPoint.newRangeQuery(IndexRows.TS, q.lo(), q.hi() - 1), BooleanClause.Occur.FILTER)
        .build();
  }

  /** One clause per distinct term, boosted by its count in the query (qf), OR-ed. */
  static Query terms(Analyzer analyzer, String text) throws IOException {
    Map<String, Integer> qf = new LinkedHashMap<>();
    try (TokenStream ts = analyzer.tokenStream(IndexRows.TEXT, new StringReader(text))) {
      CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
      ts.reset();
      while (ts.incrementToken()) qf.merge(term.toString(), 1, Integer::sum);
      ts.end();
    }
    if (qf.isEmpty()) throw new IllegalArgumentException("query without tokens: " + text);
    List<Query> clauses = new ArrayList<>();
    for (var e : qf.entrySet()) {
      Query tq = new TermQuery(new Term(IndexRows.TEXT, e.getKey()));
      clauses.add(e.getValue() == 1 ? tq : new BoostQuery(tq, e.getValue()));
    }
    if (clauses.size() == 1) return clauses.get(0);
    BooleanQuery.Builder b = new BooleanQuery.Builder();
    for (Query c : clauses) b.add(c, BooleanClause.Occur.SHOULD);
    return b.build();
  }

  static void usage() {
    System.err.println(
        "usage: SearchRows --index DIR --queries q.tsv --out lat.tsv [--warmup 1] [--passes 3]"
            + " [--k 10] [--pass-budget 600]");
    System.exit(2);
  }
}
