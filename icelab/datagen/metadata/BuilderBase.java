// What MetaBuilder and ShapedBuilder share (icelab.datagen.metadata): their key=value arguments,
// the template's data files they copy entries from (in a stable order, so one seed draws the
// same template for an entry in both), the files-per-(commit, day) counts, the manifests written
// from a thread pool with a progress line each, their fast appends, and the closing JSON line.
// Entries and their layout are each builder's own.
package icelab.metadata;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.FileInputStream;
import java.nio.ByteBuffer;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;

abstract class BuilderBase {
  protected static final long HOUR_MICROS = 3_600_000_000L;
  protected static final long DAY_MICROS = 24 * HOUR_MICROS;

  protected final Map<String, String> args;
  protected final Schema templateSchema;
  protected final Table table;
  protected final PartitionSpec spec;
  protected final List<DataFile> templates = new ArrayList<>();
  protected final int commits;
  protected final int days;
  protected final int[][] counts;
  protected final long firstEpochDay;
  protected final long seed;
  protected final double scale;
  protected final int tsField;
  protected final int dateField;
  private final AtomicLong entriesDone = new AtomicLong();

  /**
   * Loads the template and target tables and reads the arguments both builders take. With
   * `sameSchema`, a target whose schema is not the template's is refused: entries copied whole
   * carry the template's field ids.
   */
  protected BuilderBase(Map<String, String> args, boolean sameSchema) throws Exception {
    this.args = args;
    HadoopTables tables = new HadoopTables(new Configuration());
    Table template = tables.load(need("template"));
    this.table = tables.load(need("target"));
    if (sameSchema && !table.schema().sameSchema(template.schema())) {
      throw new IllegalArgumentException("target schema differs from the template's");
    }
    this.templateSchema = template.schema();
    this.spec = table.spec();
    try (CloseableIterable<FileScanTask> tasks = template.newScan().includeColumnStats().planFiles()) {
      for (FileScanTask task : tasks) {
        templates.add(task.file().copy());
      }
    }
    if (templates.isEmpty()) {
      throw new IllegalArgumentException("template table has no data files");
    }
    // Stable order: the same seed picks the same templates whatever order planning returned.
    templates.sort((a, b) -> a.path().toString().compareTo(b.path().toString()));
    this.commits = Integer.parseInt(need("commits"));
    this.days = Integer.parseInt(need("days"));
    this.counts = readCounts(need("counts"), commits, days);
    this.firstEpochDay = LocalDate.parse(need("first_day")).toEpochDay();
    this.seed = Long.parseLong(need("seed"));
    this.scale = Double.parseDouble(need("scale"));
    Schema schema = table.schema();
    this.tsField = schema.findField(need("ts_column")).fieldId();
    Types.NestedField date = schema.findField(args.getOrDefault("date_column", "date"));
    this.dateField = date == null ? -1 : date.fieldId();
  }

  /** The command line's key=value arguments. */
  protected static Map<String, String> parseArgs(String[] argv) {
    Map<String, String> args = new HashMap<>();
    for (String a : argv) {
      int eq = a.indexOf('=');
      if (eq < 0) {
        throw new IllegalArgumentException("arguments are key=value: " + a);
      }
      args.put(a.substring(0, eq), a.substring(eq + 1));
    }
    return args;
  }

  protected final String need(String key) {
    String value = args.get(key);
    if (value == null) {
      throw new IllegalArgumentException("missing argument " + key + "=...");
    }
    return value;
  }

  /** Files per (commit, day): big-endian int32, commit by commit. */
  private static int[][] readCounts(String path, int commits, int days) throws Exception {
    int[][] out = new int[commits][days];
    try (DataInputStream in =
        new DataInputStream(new BufferedInputStream(new FileInputStream(path), 1 << 16))) {
      for (int c = 0; c < commits; c++) {
        for (int d = 0; d < days; d++) {
          out[c][d] = in.readInt();
        }
      }
    }
    return out;
  }

  /** An entry's metrics: the template's sizes and counts through `own` (scaled to the entry's rows), these bounds. */
  protected static Metrics metrics(
      DataFile template,
      long rows,
      UnaryOperator<Map<Integer, Long>> own,
      Map<Integer, ByteBuffer> lower,
      Map<Integer, ByteBuffer> upper) {
    return new Metrics(
        rows,
        own.apply(template.columnSizes()),
        own.apply(template.valueCounts()),
        own.apply(template.nullValueCounts()),
        own.apply(template.nanValueCounts()),
        lower,
        upper);
  }

  /** One JSON line on stdout, whole: the pool's threads write them too. */
  protected static void emit(String json) {
    synchronized (System.out) {
      System.out.println(json);
      System.out.flush();
    }
  }

  /** Every manifest job on `threads` threads, a progress line as each ends; the manifests in job order. */
  protected final List<ManifestFile> runAll(List<Callable<ManifestFile>> jobs, int threads) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<ManifestFile>> futures = new ArrayList<>();
      for (Callable<ManifestFile> job : jobs) {
        futures.add(
            pool.submit(
                () -> {
                  ManifestFile m = job.call();
                  long done = entriesDone.addAndGet(m.addedFilesCount());
                  emit("{\"manifest\": " + m.length() + ", \"entries\": " + done + "}");
                  return m;
                }));
      }
      List<ManifestFile> out = new ArrayList<>();
      for (Future<ManifestFile> f : futures) {
        out.add(f.get());
      }
      return out;
    } finally {
      pool.shutdownNow();
    }
  }

  /** The as-ingested manifests in order, `manifests_per_commit` per fast append; the commits made. */
  protected final int appendAsIngested(List<ManifestFile> manifests) {
    int perCommit = Integer.parseInt(args.getOrDefault("manifests_per_commit", "1"));
    int made = 0;
    for (int c = 0; c < manifests.size(); c += perCommit) {
      AppendFiles append = table.newFastAppend();
      manifests.subList(c, Math.min(c + perCommit, manifests.size())).forEach(append::appendManifest);
      append.commit();
      made++;
    }
    return made;
  }

  /** Every manifest in one fast append, as rewrite_manifests commits its output; the commits made. */
  protected final int appendAll(List<ManifestFile> manifests) {
    AppendFiles append = table.newFastAppend();
    manifests.forEach(append::appendManifest);
    append.commit();
    return 1;
  }

  /** The closing line: what was written, `extra` (", \"key\": value" pairs, or "") before the seconds. */
  protected final void emitDone(List<ManifestFile> manifests, int commitsMade, String extra, long t0) {
    long bytes = 0, entries = 0;
    for (ManifestFile m : manifests) {
      bytes += m.length();
      entries += m.addedFilesCount();
    }
    emit(
        "{\"done\": true, \"manifests\": " + manifests.size() + ", \"manifest_bytes\": " + bytes
            + ", \"entries\": " + entries + ", \"commits\": " + commitsMade + ", \"templates\": "
            + templates.size() + extra + ", \"seconds\": " + (System.nanoTime() - t0) / 1e9 + "}");
  }
}
