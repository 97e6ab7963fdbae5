package scipis.bench;

import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.search.similarities.ClassicSimilarity;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;

/**
 * Indexes every regular file under --corpus as one document: "path" (the
 * absolute path, stored, not tokenized) and "content" (LogAnalyzer, docs and
 * term frequencies, norms, nothing stored), with ClassicSimilarity and
 * --threads threads calling addDocument concurrently. Prints one JSON object.
 *
 * <pre>
 * java -cp scipis-bench-lucene.jar scipis.bench.Index --corpus DIR --index DIR
 *      [--threads 2] [--ram-mb 256]
 * </pre>
 */
public final class Index {
  static final String PATH = "path";
  static final String CONTENT = "content";

  public static void main(String[] args) throws Exception {
    Path corpus = null;
    Path index = null;
    int threads = Runtime.getRuntime().availableProcessors();
    double ramMb = 256;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--corpus" -> corpus = Paths.get(args[++i]).toAbsolutePath().normalize();
        case "--index" -> index = Paths.get(args[++i]);
        case "--threads" -> threads = Integer.parseInt(args[++i]);
        case "--ram-mb" -> ramMb = Double.parseDouble(args[++i]);
        default -> usage();
      }
    }
    if (corpus == null || index == null || threads < 1) usage();

    // The walk is timed apart: scipis's clock includes its crawl.
    long tWalk = System.nanoTime();
    List<Path> files;
    try (Stream<Path> s = Files.walk(corpus)) {
      files = new ArrayList<>(s.filter(Files::isRegularFile).sorted().toList());
    }

    FieldType contentType = new FieldType();
    contentType.setTokenized(true);
    contentType.setStored(false);
    contentType.setIndexOptions(IndexOptions.DOCS_AND_FREQS);
    contentType.setOmitNorms(false);
    contentType.freeze();

    IndexWriterConfig cfg = new IndexWriterConfig(new LogAnalyzer());
    cfg.setSimilarity(new ClassicSimilarity());
    cfg.setOpenMode(IndexWriterConfig.OpenMode.CREATE);
    cfg.setRAMBufferSizeMB(ramMb);

    double walkSeconds = (System.nanoTime() - tWalk) / 1e9;
    AtomicInteger next = new AtomicInteger();
    AtomicLong bytes = new AtomicLong();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    final List<Path> work = files;
    long t0 = System.nanoTime();
    try (Directory dir = FSDirectory.open(index);
        IndexWriter w = new IndexWriter(dir, cfg)) {
      Thread[] pool = new Thread[threads];
      for (int t = 0; t < threads; t++) {
        pool[t] =
            new Thread(
                () -> {
                  try {
                    int i;
                    while ((i = next.getAndIncrement()) < work.size() && failure.get() == null) {
                      Path p = work.get(i);
                      bytes.addAndGet(Files.size(p));
                      try (Reader r =
                          new InputStreamReader(
                              Files.newInputStream(p), StandardCharsets.ISO_8859_1)) {
                        Document d = new Document();
                        d.add(new StringField(PATH, p.toString(), Field.Store.YES));
                        d.add(new Field(CONTENT, r, contentType));
                        w.addDocument(d);
                      }
                    }
                  } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                  }
                },
                "indexer-" + t);
        pool[t].start();
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
        var t = leaf.reader().terms(CONTENT);
        if (t != null) terms += t.size();
      }
    }
    double mib = bytes.get() / 1048576.0;
    System.out.printf(
        "{\"system\":\"lucene\",\"files\":%d,\"bytes\":%d,\"seconds\":%.3f,\"walk_seconds\":%.3f,\"mib_per_s\":%.2f,"
            + "\"index_bytes\":%d,\"segments\":%d,\"segment_terms\":%d,\"threads\":%d,"
            + "\"ram_mb\":%.0f,\"lucene\":\"%s\"}%n",
        files.size(), bytes.get(), seconds, walkSeconds, mib / seconds, indexBytes, segments, terms, threads,
        ramMb, org.apache.lucene.util.Version.LATEST);
  }

  static void usage() {
    System.err.println(
        "usage: Index --corpus DIR --index DIR [--threads N] [--ram-mb MB]");
    System.exit(2);
  }
}
