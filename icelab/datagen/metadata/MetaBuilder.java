// Writes an Iceberg table state made of metadata only: data-file entries that carry what a real
// entry of the event schema carries, committed through Iceberg's own API (icelab.datagen.metadata).
// The data files do not exist: planning never opens one. Compiled by icelab.datagen.metadata.java
// with javac against PySpark's jars and the Iceberg runtime jar; run as its own JVM.
//
// Entries are copies of real entries (every data file of a template table icelab wrote with
// Spark), each given its own path, day partition and timestamp/date bounds, and its counts and
// sizes scaled to the target's rows per file. Entry (commit, day, k) is drawn from a seed of its
// own, so both layouts of one state hold the same entries:
//   layout=as_ingested  manifest c holds commit c's entries over every day it touched; manifests
//                       are committed in order, `manifests_per_commit` per fast append
//   layout=clustered    entries sorted by day, days grouped into `ranges`, each range cut every
//                       `entries_per_manifest` entries: how rewrite_manifests lays them out
//                       (range-partitioned by the partition value, then rolled at the target size);
//                       one fast append
// Progress and the result are JSON lines on stdout.
package icelab.metadata;

import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.Callable;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestWriter;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;

public final class MetaBuilder extends BuilderBase {
  private final String partitionField;
  private final String parquetRoot;

  private MetaBuilder(Map<String, String> args) throws Exception {
    super(args, true);
    this.partitionField = spec.fields().get(0).name();
    this.parquetRoot = args.getOrDefault("parquet_root", "");
  }

  private static Map<Integer, Long> scaled(Map<Integer, Long> source, double factor) {
    if (source == null) {
      return null;
    }
    Map<Integer, Long> out = new HashMap<>(source.size() * 2);
    source.forEach((k, v) -> out.put(k, Math.round(v * factor)));
    return out;
  }

  /** Entry (commit, day, k): the same entry in every layout. */
  DataFile entry(int commit, int day, int k) {
    long mix = seed * 0x9E3779B97F4A7C15L + ((long) commit << 40) + ((long) day << 24) + k;
    SplittableRandom random = new SplittableRandom(mix);
    DataFile template = templates.get(random.nextInt(templates.size()));
    // Rows per file like the target dataset's: the template's, scaled, with some spread.
    double factor = scale * (0.75 + 0.5 * random.nextDouble());
    long rows = Math.max(1, Math.round(template.recordCount() * factor));
    double f = (double) rows / template.recordCount();
    long epochDay = firstEpochDay + day;
    LocalDate date = LocalDate.ofEpochDay(epochDay);
    Map<Integer, ByteBuffer> lower = new HashMap<>(template.lowerBounds());
    Map<Integer, ByteBuffer> upper = new HashMap<>(template.upperBounds());
    long start = epochDay * DAY_MICROS;
    Types.NestedField ts = table.schema().findField(tsField);
    lower.put(tsField, Conversions.toByteBuffer(ts.type(), start + random.nextLong(3_600_000_000L)));
    upper.put(tsField, Conversions.toByteBuffer(ts.type(), start + DAY_MICROS - 1 - random.nextLong(3_600_000_000L)));
    if (dateField >= 0) {
      ByteBuffer value = Conversions.toByteBuffer(Types.DateType.get(), (int) epochDay);
      lower.put(dateField, value);
      upper.put(dateField, value.duplicate());
    }
    Metrics metrics = metrics(template, rows, counts -> scaled(counts, f), lower, upper);
    String name = "c" + commit + "-" + k + ".parquet";
    return DataFiles.builder(spec)
        .copy(template)
        .withPath(table.location() + "/data/" + partitionField + "=" + date + "/" + name)
        .withPartitionPath(partitionField + "=" + date)
        .withRecordCount(rows)
        .withFileSizeInBytes(Math.max(1, Math.round(template.fileSizeInBytes() * f)))
        .withMetrics(metrics)
        .build();
  }

  /**
   * A sparse file of the entry's size where the Parquet table lists it (no blocks written), named
   * as Spark names a file it writes, with the hidden checksum file Hadoop's local file system
   * writes beside each (8 bytes, then 4 per 512): a listing here meets the directory entries it
   * meets in a table Spark wrote to local disk (the states are on local disk).
   */
  private void placeholder(int commit, int day, int k, DataFile file) throws Exception {
    Path dir = Paths.get(parquetRoot, "date=" + LocalDate.ofEpochDay(firstEpochDay + day));
    String name = sparkName(seed, commit, day, k);
    sparse(dir.resolve(name), file.fileSizeInBytes());
    sparse(dir.resolve("." + name + ".crc"), 8 + 4 * ((file.fileSizeInBytes() + 511) / 512));
  }

  /** Spark's part-<task>-<uuid>.c000.zstd.parquet for entry (commit, day, k); seed and entry fix the uuid. */
  static String sparkName(long seed, int commit, int day, int k) {
    UUID id = new UUID(seed, ((long) commit << 40) | ((long) day << 24) | k);
    return String.format("part-%05d-%s.c000.zstd.parquet", k % 100_000, id);
  }

  private static void sparse(Path path, long length) throws Exception {
    try (RandomAccessFile out = new RandomAccessFile(path.toFile(), "rw")) {
      out.setLength(length);
    }
  }

  private ManifestWriter<DataFile> writer(String name) {
    return ManifestFiles.write(2, spec, table.io().newOutputFile(table.location() + "/metadata/" + name), null);
  }

  private ManifestFile asIngestedManifest(int commit) throws Exception {
    ManifestWriter<DataFile> out = writer("meta-c" + commit + "-m0.avro");
    try {
      for (int d = 0; d < days; d++) {
        for (int k = 0; k < counts[commit][d]; k++) {
          DataFile file = entry(commit, d, k);
          out.add(file);
          if (!parquetRoot.isEmpty()) {
            placeholder(commit, d, k, file);
          }
        }
      }
    } finally {
      out.close();
    }
    return out.toManifestFile();
  }

  private ManifestFile clusteredManifest(int index, int[] dayOf, int[] commitOf, int[] kOf, int from, int to)
      throws Exception {
    ManifestWriter<DataFile> out = writer("meta-r" + index + "-m0.avro");
    try {
      for (int i = from; i < to; i++) {
        out.add(entry(commitOf[i], dayOf[i], kOf[i]));
      }
    } finally {
      out.close();
    }
    return out.toManifestFile();
  }

  private void run() throws Exception {
    int threads = Integer.parseInt(args.getOrDefault("threads", "2"));
    String layout = need("layout");
    long t0 = System.nanoTime();
    List<Callable<ManifestFile>> jobs = new ArrayList<>();
    int commitsMade = 0;
    List<ManifestFile> manifests;
    if (layout.equals("as_ingested")) {
      if (!parquetRoot.isEmpty()) {
        for (int d = 0; d < days; d++) {
          Files.createDirectories(Paths.get(parquetRoot, "date=" + LocalDate.ofEpochDay(firstEpochDay + d)));
        }
      }
      for (int c = 0; c < commits; c++) {
        final int commit = c;
        jobs.add(() -> asIngestedManifest(commit));
      }
      manifests = runAll(jobs, threads);
      long written = System.nanoTime();
      commitsMade = appendAsIngested(manifests);
      emit("{\"commit_s\": " + (System.nanoTime() - written) / 1e9 + "}");
    } else if (layout.equals("clustered")) {
      long total = 0;
      for (int[] row : counts) {
        for (int n : row) {
          total += n;
        }
      }
      int[] dayOf = new int[(int) total];
      int[] commitOf = new int[(int) total];
      int[] kOf = new int[(int) total];
      int i = 0;
      for (int d = 0; d < days; d++) {
        for (int c = 0; c < commits; c++) {
          for (int k = 0; k < counts[c][d]; k++) {
            dayOf[i] = d;
            commitOf[i] = c;
            kOf[i] = k;
            i++;
          }
        }
      }
      // ranges: the first day of each range, comma-separated (range-partitioning by day never
      // splits a day between two ranges); within a range, a manifest every entries_per_manifest.
      String[] starts = need("ranges").split(",");
      long perManifest = Long.parseLong(need("entries_per_manifest"));
      int[] firstIndex = new int[days + 1];
      for (int d = 0, idx = 0; d <= days; d++) {
        firstIndex[d] = idx;
        if (d < days) {
          for (int c = 0; c < commits; c++) {
            idx += counts[c][d];
          }
        }
      }
      int index = 0;
      for (int r = 0; r < starts.length; r++) {
        int from = firstIndex[Integer.parseInt(starts[r].trim())];
        int to = r + 1 < starts.length ? firstIndex[Integer.parseInt(starts[r + 1].trim())] : (int) total;
        for (int a = from; a < to; a += perManifest) {
          final int lo = a, hi = (int) Math.min(to, a + perManifest), at = index++;
          jobs.add(() -> clusteredManifest(at, dayOf, commitOf, kOf, lo, hi));
        }
      }
      manifests = runAll(jobs, threads);
      commitsMade = appendAll(manifests);
    } else {
      throw new IllegalArgumentException("layout=" + layout + ": as_ingested or clustered");
    }
    emitDone(manifests, commitsMade, "", t0);
  }

  public static void main(String[] argv) throws Exception {
    new MetaBuilder(parseArgs(argv)).run();
  }
}
