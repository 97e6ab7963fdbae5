package scipis.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.search.similarities.ClassicSimilarity;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;

/**
 * The Lucene side of bench/am: one document per table row.
 *
 * <pre>
 * java -cp scipis-bench-lucene.jar scipis.bench.IndexRows --index DIR
 *      (--rows rows.tsv [--limit N] | --files docs.tsv) [--threads 2] [--ram-mb 256]
 * </pre>
 *
 * <p>--rows: a file in PostgreSQL's COPY text format with the columns id, host, ts, line
 * (backslash escapes undone: \\ \t \n \r); the first --limit rows are indexed, each as a
 * document with "id" (stored long), "ts" (LongPoint, epoch seconds, for range filters) and
 * "text" (the line: LogAnalyzer = scipis's tokenizer, docs and term frequencies, norms, not
 * stored). host is read but not indexed (no SQL index covers it either).
 *
 * <p>--files: a TSV of id and path; each file becomes one document ("id" stored, "text" its
 * content read as ISO-8859-1, so one char is one byte as in scipis's byte tokenizer).
 *
 * <p>One reader thread parses the input into batches of 256 documents' fields; --threads
 * threads build the documents and call addDocument concurrently; ClassicSimilarity; timed from
 * before the first read until commit() and close() return (no force-merge). Prints one JSON
 * object: rows, text bytes (the line's or file's bytes), seconds, index bytes (the directory's
 * files), segments, terms.
 */
public final class IndexRows {
  static final String ID = "id";
  static final String TS = "ts";
  static final String TEXT = "text";
  static final DateTimeFormatter PG_TS = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss[.SSSSSS]X");

  record Row(long id, long ts, String text, Path file) {}

  private static final List<Row> END = new ArrayList<>();

  public static void main(String[] args) throws Exception {
    Path index = null, rows = null, files = null;
    long limit = Long.MAX_VALUE;
    int threads = Runtime.getRuntime().availableProcessors();
    double ramMb = 256;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--index" -> index = Paths.get(args[++i]);
        case "--rows" -> rows = Paths.get(args[++i]);
        case "--files" -> files = Paths.get(args[++i]);
        case "--limit" -> limit = Long.parseLong(args[++i]);
        case "--threads" -> threads = Integer.parseInt(args[++i]);
        case "--ram-mb" -> ramMb = Double.parseDouble(args[++i]);
        default -> usage();
      }
    }
    if (index == null || (rows == null) == (files == null) || threads < 1) usage();

    FieldType textType = new FieldType();
    textType.setTokenized(true);
    textType.setStored(false);
    textType.setIndexOptions(IndexOptions.DOCS_AND_FREQS);
    textType.setOmitNorms(false);
    textType.freeze();

    IndexWriterConfig cfg = new IndexWriterConfig(new LogAnalyzer());
    cfg.setSimilarity(new ClassicSimilarity());
    cfg.setOpenMode(IndexWriterConfig.OpenMode.CREATE);
    cfg.setRAMBufferSizeMB(ramMb);

    BlockingQueue<List<Row>> queue = new ArrayBlockingQueue<>(64);
    AtomicLong nrows = new AtomicLong();
    AtomicLong bytes = new AtomicLong();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    final boolean fromRows = rows != null;
    long t0 = System.nanoTime();
    try (Directory dir = FSDirectory.open(index);
        IndexWriter w = new IndexWriter(dir, cfg)) {
      Thread[] pool = new Thread[threads];
      for (int t = 0; t < threads; t++) {
        pool[t] =
            new Thread(
                () -> {
                  try {
                    for (; ; ) {
                      List<Row> batch = queue.take();
                      if (batch == END) break;
                      for (Row r : batch) {
                        Document d = new Document();
                        d.add(new StoredField(ID, r.id()));
                        if (fromRows) {
                          d.add(new LongPoint(TS, r.ts()));
                          d.add(new Field(TEXT, r.text(), textType));
                          bytes.addAndGet(r.text().length());
                          w.addDocument(d);
                        } else {
                          String body = Files.readString(r.file(), StandardCharsets.ISO_8859_1);
                          bytes.addAndGet(body.length());
                          d.add(new Field(TEXT, body, textType));
                          w.addDocument(d);
                        }
                        nrows.incrementAndGet();
                      }
                    }
                  } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                    // keep draining so that the reader never blocks forever
                    try {
                      while (queue.take() != END) {}
                    } catch (InterruptedException ignored) {
                    }
                  }
                },
                "indexer-" + t);
        pool[t].start();
      }
      try {
        if (fromRows) readRows(rows, limit, queue);
        else readFiles(files, queue);
      } finally {
        for (int t = 0; t < threads; t++) queue.put(END);
      }
      for (Thread t : pool) t.join();
      if (failure.get() != null) throw new RuntimeException(failure.get());
      w.commit();
    } // close() waits for running merges
    double seconds = (System.nanoTime() - t0) / 1e9;

    long indexBytes = 0;
    try (Stream<Path> s = Files.walk(index)) {
      for (Path p : (Iterable<Path>) s.filter(Files::isRegularFile)::iterator) {
        indexBytes += Files.size(p);
      }
    }
    int segments;
    long terms = 0;
    try (Directory dir = FSDirectory.open(index);
        DirectoryReader r = DirectoryReader.open(dir)) {
      segments = r.leaves().size();
      for (var leaf : r.leaves()) {
        var t = leaf.reader().terms(TEXT);
        if (t != null) terms += t.size();
      }
    }
    System.out.printf(
        "{\"system\":\"lucene\",\"rows\":%d,\"bytes\":%d,\"seconds\":%.3f,\"mib_per_s\":%.2f,"
            + "\"index_bytes\":%d,\"segments\":%d,\"segment_terms\":%d,\"threads\":%d,"
            + "\"ram_mb\":%.0f,\"lucene\":\"%s\"}%n",
        nrows.get(), bytes.get(), seconds, bytes.get() / 1048576.0 / seconds, indexBytes, segments,
        terms, threads, ramMb, org.apache.lucene.util.Version.LATEST);
  }

  static void readRows(Path rows, long limit, BlockingQueue<List<Row>> queue) throws Exception {
    long n = 0;
    List<Row> batch = new ArrayList<>(256);
    try (BufferedReader in = Files.newBufferedReader(rows, StandardCharsets.ISO_8859_1)) {
      String l;
      while (n < limit && (l = in.readLine()) != null) {
        int a = l.indexOf('\t');
        int b = l.indexOf('\t', a + 1);
        int c = l.indexOf('\t', b + 1);
        if (a < 0 || b < 0 || c < 0) throw new IOException("bad row " + (n + 1) + ": " + l);
        long id = Long.parseLong(l, 0, a, 10);
        long ts = OffsetDateTime.parse(l.substring(b + 1, c), PG_TS).toEpochSecond();
        batch.add(new Row(id, ts, unescape(l, c + 1), null));
        n++;
        if (batch.size() == 256) {
          queue.put(batch);
          batch = new ArrayList<>(256);
        }
      }
    }
    if (!batch.isEmpty()) queue.put(batch);
  }

  static void readFiles(Path list, BlockingQueue<List<Row>> queue) throws Exception {
    List<Row> batch = new ArrayList<>(16);
    for (String l : Files.readAllLines(list, StandardCharsets.UTF_8)) {
      if (l.isEmpty()) continue;
      int a = l.indexOf('\t');
      batch.add(new Row(Long.parseLong(l.substring(0, a)), 0, null, Paths.get(l.substring(a + 1))));
      if (batch.size() == 16) {
        queue.put(batch);
        batch = new ArrayList<>(16);
      }
    }
    if (!batch.isEmpty()) queue.put(batch);
  }

  /** COPY text format: \\ \t \n \r and \N (null: empty here). */
  static String unescape(String l, int from) {
    if (l.indexOf('\\', from) < 0) return l.substring(from);
    StringBuilder sb = new StringBuilder(l.length() - from);
    for (int i = from; i < l.length(); i++) {
      char ch = l.charAt(i);
      if (ch != '\\' || i + 1 >= l.length()) {
        sb.append(ch);
        continue;
      }
      char e = l.charAt(++i);
      switch (e) {
        case 't' -> sb.append('\t');
        case 'n' -> sb.append('\n');
        case 'r' -> sb.append('\r');
        case 'N' -> {}
        default -> sb.append(e);
      }
    }
    return sb.toString();
  }

  static void usage() {
    System.err.println(
        "usage: IndexRows --index DIR (--rows rows.tsv [--limit N] | --files docs.tsv)"
            + " [--threads N] [--ram-mb MB]");
    System.exit(2);
  }
}
