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
 * Runs the benchmark queries (queries.tsv from pick_queries) against the
 * index: top-10 by ClassicSimilarity, terms OR-ed (scipis match 'any'), the
 * stored path of each hit fetched. Everything is timed in the JVM per query
 * with System.nanoTime, one thread, after --warmup full passes over the
 * query set, in --passes measured passes; the query cache is off so repeats
 * gain nothing.
 *
 * <p>Writes --out (CSV: system,pass,id,kind,us,nrows; measured passes are
 * numbered 1..passes) and --topk (CSV: system,id,rank,path,score, from the
 * first measured pass).
 */
public final class Search {
  record Q(int id, String kind, String text) {}

  public static void main(String[] args) throws Exception {
    Path index = null, queries = null, out = null, topk = null;
    int warmup = 3, passes = 3, k = 10;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--index" -> index = Paths.get(args[++i]);
        case "--queries" -> queries = Paths.get(args[++i]);
        case "--out" -> out = Paths.get(args[++i]);
        case "--topk" -> topk = Paths.get(args[++i]);
        case "--warmup" -> warmup = Integer.parseInt(args[++i]);
        case "--passes" -> passes = Integer.parseInt(args[++i]);
        case "--k" -> k = Integer.parseInt(args[++i]);
        default -> usage();
      }
    }
    if (index == null || queries == null || out == null) usage();

    List<Q> qs = new ArrayList<>();
    for (String line : Files.readAllLines(queries, StandardCharsets.UTF_8)) {
      String[] f = line.split("\t");
      if (f.length < 3 || f[0].equals("id")) continue;
      qs.add(new Q(Integer.parseInt(f[0]), f[1], f[2]));
    }

    Analyzer analyzer = new LogAnalyzer();
    try (var dir = FSDirectory.open(index);
        DirectoryReader reader = DirectoryReader.open(dir)) {
      IndexSearcher searcher = new IndexSearcher(reader);
      searcher.setSimilarity(new ClassicSimilarity());
      searcher.setQueryCache(null);
      Set<String> pathOnly = Set.of(Index.PATH);

      long[][] us = new long[passes][qs.size()];
      int[] nrows = new int[qs.size()];
      String[][] paths = new String[qs.size()][];
      float[][] scores = new float[qs.size()][];
      for (int pass = 1 - warmup; pass <= passes; pass++) {
        for (int i = 0; i < qs.size(); i++) {
          long t0 = System.nanoTime();
          Query q = build(analyzer, qs.get(i).text());
          TopDocs td = searcher.search(q, k);
          StoredFields sf = searcher.storedFields();
          String[] p = new String[td.scoreDocs.length];
          float[] s = new float[td.scoreDocs.length];
          for (int j = 0; j < td.scoreDocs.length; j++) {
            ScoreDoc sd = td.scoreDocs[j];
            p[j] = sf.document(sd.doc, pathOnly).get(Index.PATH);
            s[j] = sd.score;
          }
          long t1 = System.nanoTime();
          if (pass >= 1) us[pass - 1][i] = (t1 - t0 + 500) / 1000;
          if (pass == 1) {
            nrows[i] = p.length;
            paths[i] = p;
            scores[i] = s;
          }
        }
      }
      try (BufferedWriter w = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
        w.write("system,pass,id,kind,us,nrows\n");
        for (int pass = 1; pass <= passes; pass++) {
          for (int i = 0; i < qs.size(); i++) {
            w.write("lucene," + pass + "," + qs.get(i).id() + "," + qs.get(i).kind() + ","
                + us[pass - 1][i] + "," + nrows[i] + "\n");
          }
        }
      }
      if (topk != null) {
        try (BufferedWriter w = Files.newBufferedWriter(topk, StandardCharsets.UTF_8)) {
          w.write("system,id,rank,path,score\n");
          for (int i = 0; i < qs.size(); i++) {
            for (int j = 0; j < paths[i].length; j++) {
              w.write("lucene," + qs.get(i).id() + "," + (j + 1) + "," + csv(paths[i][j]) + ","
                  + scores[i][j] + "\n");
            }
          }
        }
      }
    }
  }

  /** One clause per distinct term, boosted by its count in the query (qf). */
  static Query build(Analyzer analyzer, String text) throws IOException {
    Map<String, Integer> qf = new LinkedHashMap<>();
    try (TokenStream ts = analyzer.tokenStream(Index.CONTENT, new StringReader(text))) {
      CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
      ts.reset();
      while (ts.incrementToken()) qf.merge(term.toString(), 1, Integer::sum);
      ts.end();
    }
    if (qf.isEmpty()) throw new IllegalArgumentException("query without tokens: " + text);
    List<Query> clauses = new ArrayList<>();
    for (var e : qf.entrySet()) {
      Query tq = new TermQuery(new Term(Index.CONTENT, e.getKey()));
      clauses.add(e.getValue() == 1 ? tq : new BoostQuery(tq, e.getValue()));
    }
    if (clauses.size() == 1) return clauses.get(0);
    BooleanQuery.Builder b = new BooleanQuery.Builder();
    for (Query c : clauses) b.add(c, BooleanClause.Occur.SHOULD);
    return b.build();
  }

  static String csv(String s) {
    if (s.indexOf(',') < 0 && s.indexOf('"') < 0 && s.indexOf('\n') < 0) return s;
    return "\"" + s.replace("\"", "\"\"") + "\"";
  }

  static void usage() {
    System.err.println(
        "usage: Search --index DIR --queries queries.tsv --out lat.csv [--topk topk.csv]"
            + " [--warmup 3] [--passes 3] [--k 10]");
    System.exit(2);
  }
}
