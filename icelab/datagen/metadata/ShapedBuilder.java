// Writes a shaped metadata-only Iceberg table state (icelab.datagen.metadata.shapes): the entries
// MetaBuilder would write for (commit, day, k), laid out under the target table's own partition
// spec and schema. The spec is read from the table: days, hours or months of the timestamp, an
// identity field (a category) and a bucket field before the day. A narrow schema keeps the
// template's statistics for its own columns only (matched by name). No Parquet placeholders:
// a shaped state is measured on its Iceberg tables only. With delete_commits=N, N row deltas
// then add position-delete files over the latest `delete_days` days (merge-on-read), after the data.
//   layout=as_ingested  manifest c holds commit c's entries; `manifests_per_commit` per fast append
//   layout=clustered    entries sorted by partition tuple, range-partitioned into
//                       ceil(entries x entry_bytes / target_bytes) ranges (a partition value
//                       never split), each range cut every target_bytes / entry_bytes entries:
//                       how rewrite_manifests lays them out; one fast append
// Progress and the result are JSON lines on stdout, as MetaBuilder writes them.
package icelab.metadata;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileMetadata;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestWriter;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.PartitionData;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;

public final class ShapedBuilder extends BuilderBase {
  /** What fills one partition field. */
  private enum Fill { DAY, HOUR, MONTH, CATEGORY, BUCKET }

  private final Fill[] fills;
  private final int buckets;
  private final String[] categories;
  private final Map<Integer, Integer> idOf = new HashMap<>();
  private final int categoryField;

  private ShapedBuilder(Map<String, String> args) throws Exception {
    // The template's columns may be another schema's: they are matched by name below.
    super(args, false);
    Schema schema = table.schema();
    // The target's columns by the template's field ids: a narrow schema renumbers its fields.
    for (int id : TypeUtil.indexById(templateSchema.asStruct()).keySet()) {
      Types.NestedField own = schema.findField(templateSchema.findColumnName(id));
      if (own != null) {
        // Leaves only: a struct's type names its fields' ids, which a narrow schema renumbers.
        if (own.type().isPrimitiveType() && !own.type().equals(templateSchema.findType(id))) {
          throw new IllegalArgumentException("column " + own.name() + ": type differs from the template's");
        }
        idOf.put(id, own.fieldId());
      }
    }
    this.categories = args.getOrDefault("categories", "").isEmpty() ? new String[0] : need("categories").split(",");
    Arrays.sort(categories); // rewrite_manifests orders an identity field by its value
    this.fills = new Fill[spec.fields().size()];
    int bucketCount = 1, category = -1;
    for (int i = 0; i < fills.length; i++) {
      PartitionField field = spec.fields().get(i);
      String transform = field.transform().toString();
      if (field.sourceId() == tsField && transform.equals("day")) {
        fills[i] = Fill.DAY;
      } else if (field.sourceId() == tsField && transform.equals("hour")) {
        fills[i] = Fill.HOUR;
      } else if (field.sourceId() == tsField && transform.equals("month")) {
        fills[i] = Fill.MONTH;
      } else if (transform.equals("identity") && categories.length > 0) {
        fills[i] = Fill.CATEGORY;
        category = field.sourceId();
      } else if (transform.startsWith("bucket[")) {
        fills[i] = Fill.BUCKET;
        bucketCount = Integer.parseInt(transform.substring(7, transform.length() - 1));
      } else {
        throw new IllegalArgumentException("partition field " + field + ": no way to fill it");
      }
    }
    this.buckets = bucketCount;
    this.categoryField = category;
  }

  /** MetaBuilder's seed of entry (commit, day, k): its template draws are MetaBuilder's. */
  private long mix(int commit, int day, int k) {
    return seed * 0x9E3779B97F4A7C15L + ((long) commit << 40) + ((long) day << 24) + k;
  }

  /** Where entry (commit, day, k) falls within its day: {hour, category, bucket}, from a seed of its own. */
  private int[] place(int commit, int day, int k) {
    SplittableRandom random = new SplittableRandom(~mix(commit, day, k));
    return new int[] {random.nextInt(24), random.nextInt(Math.max(1, categories.length)), random.nextInt(buckets)};
  }

  private static int epochMonth(long epochDay) {
    java.time.LocalDate date = java.time.LocalDate.ofEpochDay(epochDay);
    return (date.getYear() - 1970) * 12 + date.getMonthValue() - 1;
  }

  /** Partition field i's value for an entry on `epochDay` placed at `at`. */
  private Object value(int i, long epochDay, int[] at) {
    switch (fills[i]) {
      case DAY:
        return (int) epochDay;
      case HOUR:
        return (int) (epochDay * 24 + at[0]);
      case MONTH:
        return epochMonth(epochDay);
      case CATEGORY:
        return categories[at[1]];
      default:
        return at[2];
    }
  }

  /** The sort key of an entry's partition tuple, as rewrite_manifests orders tuples (field by field). */
  long key(int commit, int day, int k) {
    int[] at = place(commit, day, k);
    long key = 0;
    for (int i = 0; i < fills.length; i++) {
      Object v = value(i, firstEpochDay + day, at);
      long ordinal = fills[i] == Fill.CATEGORY ? at[1] : ((Integer) v).longValue();
      key = key * (1L << 24) + ordinal; // time values here (hours since 1970) stay below 2^24
    }
    return key;
  }

  private Map<Integer, Long> own(Map<Integer, Long> source, double factor) {
    if (source == null) {
      return null;
    }
    Map<Integer, Long> out = new HashMap<>();
    source.forEach((id, v) -> {
      if (idOf.containsKey(id)) {
        out.put(idOf.get(id), Math.round(v * factor));
      }
    });
    return out;
  }

  private Map<Integer, ByteBuffer> own(Map<Integer, ByteBuffer> source) {
    Map<Integer, ByteBuffer> out = new HashMap<>();
    source.forEach((id, v) -> {
      if (idOf.containsKey(id)) {
        out.put(idOf.get(id), v);
      }
    });
    return out;
  }

  /** Entry (commit, day, k): MetaBuilder's entry, in this table's partition and columns. */
  DataFile entry(int commit, int day, int k) {
    SplittableRandom random = new SplittableRandom(mix(commit, day, k));
    DataFile template = templates.get(random.nextInt(templates.size()));
    double factor = scale * (0.75 + 0.5 * random.nextDouble());
    long rows = Math.max(1, Math.round(template.recordCount() * factor));
    double f = (double) rows / template.recordCount();
    long epochDay = firstEpochDay + day;
    int[] at = place(commit, day, k);
    Map<Integer, ByteBuffer> lower = own(template.lowerBounds());
    Map<Integer, ByteBuffer> upper = own(template.upperBounds());
    // The timestamps span the entry's day (as MetaBuilder's do), or its hour under an hour spec.
    boolean hourly = Arrays.asList(fills).contains(Fill.HOUR);
    long start = epochDay * DAY_MICROS + (hourly ? at[0] * HOUR_MICROS : 0);
    long span = hourly ? HOUR_MICROS : DAY_MICROS;
    long edge = hourly ? HOUR_MICROS / 10 : HOUR_MICROS;
    Types.NestedField ts = table.schema().findField(tsField);
    lower.put(tsField, Conversions.toByteBuffer(ts.type(), start + random.nextLong(edge)));
    upper.put(tsField, Conversions.toByteBuffer(ts.type(), start + span - 1 - random.nextLong(edge)));
    if (dateField >= 0) {
      ByteBuffer value = Conversions.toByteBuffer(Types.DateType.get(), (int) epochDay);
      lower.put(dateField, value);
      upper.put(dateField, value.duplicate());
    }
    if (categoryField >= 0) {
      // A file of one category holds that value only.
      ByteBuffer value = Conversions.toByteBuffer(Types.StringType.get(), categories[at[1]]);
      lower.put(categoryField, value);
      upper.put(categoryField, value.duplicate());
    }
    PartitionData partition = partition(commit, day, k);
    Metrics metrics = metrics(template, rows, counts -> own(counts, f), lower, upper);
    return DataFiles.builder(spec)
        .withFormat(template.format())
        .withPath(table.location() + "/data/" + spec.partitionToPath(partition) + "/c" + commit + "-" + k + ".parquet")
        .withPartition(partition)
        .withRecordCount(rows)
        .withFileSizeInBytes(Math.max(1, Math.round(template.fileSizeInBytes() * f)))
        .withSplitOffsets(template.splitOffsets())
        .withSortOrder(table.sortOrder())
        .withMetrics(metrics)
        .build();
  }

  private ManifestFile manifest(String name, long[] packed, int from, int to) throws Exception {
    ManifestWriter<DataFile> out =
        ManifestFiles.write(2, spec, table.io().newOutputFile(table.location() + "/metadata/" + name), null);
    try {
      for (int i = from; i < to; i++) {
        long p = packed[i];
        out.add(entry((int) (p >>> 40), (int) ((p >>> 24) & 0xFFFF), (int) (p & 0xFFFFFF)));
      }
    } finally {
      out.close();
    }
    return out.toManifestFile();
  }

  private PartitionData partition(int commit, int day, int k) {
    int[] at = place(commit, day, k);
    PartitionData partition = new PartitionData(spec.partitionType());
    for (int i = 0; i < fills.length; i++) {
      partition.set(i, value(i, firstEpochDay + day, at));
    }
    return partition;
  }

  /**
   * Position deletes over the latest `delete_days` days: `delete_commits` row deltas, each with
   * one delete file per partition of those days holding data, its file_path bounds spanning that
   * partition's data files (a partition-scoped file, as a writer deleting rows of several files
   * writes). Committed after the data, so they apply to it. Returns the delete files added.
   */
  private long commitDeletes(long[] packed) {
    int deltas = Integer.parseInt(args.getOrDefault("delete_commits", "0"));
    int firstDay = days - Integer.parseInt(args.getOrDefault("delete_days", "0"));
    Map<String, PartitionData> partitions = new java.util.TreeMap<>();
    for (long p : packed) {
      int commit = (int) (p >>> 40), day = (int) ((p >>> 24) & 0xFFFF), k = (int) (p & 0xFFFFFF);
      if (deltas > 0 && day >= firstDay) {
        PartitionData partition = partition(commit, day, k);
        partitions.putIfAbsent(spec.partitionToPath(partition), partition);
      }
    }
    int path = MetadataColumns.DELETE_FILE_PATH.fieldId(), pos = MetadataColumns.DELETE_FILE_POS.fieldId();
    long added = 0;
    for (int j = 0; j < deltas; j++) {
      RowDelta delta = table.newRowDelta();
      for (Map.Entry<String, PartitionData> e : partitions.entrySet()) {
        String prefix = table.location() + "/data/" + e.getKey() + "/";
        long rows = 20;
        Map<Integer, ByteBuffer> lower = new HashMap<>(), upper = new HashMap<>();
        // Data files here are named c<commit>-<k>.parquet: "c" to "d" spans them all.
        lower.put(path, Conversions.toByteBuffer(Types.StringType.get(), prefix + "c"));
        upper.put(path, Conversions.toByteBuffer(Types.StringType.get(), prefix + "d"));
        lower.put(pos, Conversions.toByteBuffer(Types.LongType.get(), 0L));
        upper.put(pos, Conversions.toByteBuffer(Types.LongType.get(), 1000L));
        delta.addDeletes(
            FileMetadata.deleteFileBuilder(spec)
                .ofPositionDeletes()
                .withPath(prefix + "delete-" + j + ".parquet")
                .withFormat(FileFormat.PARQUET)
                .withPartition(e.getValue())
                .withRecordCount(rows)
                .withFileSizeInBytes(1500 + 12 * rows)
                .withMetrics(new Metrics(rows, null, null, null, null, lower, upper))
                .build());
        added++;
      }
      delta.commit();
    }
    return added;
  }

  /** Every entry as (commit << 40 | day << 24 | k), commit by commit, day by day. */
  private long[] entries() {
    long total = 0;
    for (int[] row : counts) {
      for (int n : row) {
        total += n;
      }
    }
    long[] packed = new long[(int) total];
    int i = 0;
    for (int c = 0; c < commits; c++) {
      for (int d = 0; d < days; d++) {
        for (int k = 0; k < counts[c][d]; k++) {
          packed[i++] = ((long) c << 40) | ((long) d << 24) | k;
        }
      }
    }
    return packed;
  }

  /** The clustered jobs: entries in partition order, in ranges that never split a partition value. */
  private List<Callable<ManifestFile>> clustered(long[] packed) {
    int total = packed.length;
    long[][] keyed = new long[total][];
    for (int i = 0; i < total; i++) {
      long p = packed[i];
      keyed[i] = new long[] {key((int) (p >>> 40), (int) ((p >>> 24) & 0xFFFF), (int) (p & 0xFFFFFF)), p};
    }
    Arrays.sort(keyed, (a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
    for (int i = 0; i < total; i++) {
      packed[i] = keyed[i][1];
    }
    double entryBytes = Double.parseDouble(need("entry_bytes"));
    long target = Long.parseLong(need("target_bytes"));
    int ranges = (int) Math.max(1, Math.ceil(total * entryBytes / target));
    int perManifest = (int) Math.max(1, Math.floor(target / entryBytes));
    // A partition value goes to the range its middle entry falls in (rewrite_manifests
    // range-partitions by the partition tuple); a new range starts where the owner changes.
    List<Integer> starts = new ArrayList<>();
    int owner = -1;
    for (int a = 0; a < total; ) {
      int b = a;
      while (b < total && keyed[b][0] == keyed[a][0]) {
        b++;
      }
      int at = (int) Math.min(ranges - 1, (long) ((a + (b - a) / 2.0) * ranges / total));
      if (at != owner) {
        starts.add(a);
        owner = at;
      }
      a = b;
    }
    starts.add(total);
    List<Callable<ManifestFile>> jobs = new ArrayList<>();
    int index = 0;
    for (int r = 0; r + 1 < starts.size(); r++) {
      for (int a = starts.get(r); a < starts.get(r + 1); a += perManifest) {
        final int lo = a, hi = Math.min(starts.get(r + 1), a + perManifest), at = index++;
        jobs.add(() -> manifest("meta-r" + at + "-m0.avro", packed, lo, hi));
      }
    }
    return jobs;
  }

  private void run() throws Exception {
    int threads = Integer.parseInt(args.getOrDefault("threads", "2"));
    String layout = need("layout");
    long t0 = System.nanoTime();
    long[] packed = entries();
    List<Callable<ManifestFile>> jobs = new ArrayList<>();
    int commitsMade = 0;
    List<ManifestFile> manifests;
    if (layout.equals("as_ingested")) {
      int from = 0;
      for (int c = 0; c < commits; c++) {
        int size = Arrays.stream(counts[c]).sum(), lo = from, at = c;
        jobs.add(() -> manifest("meta-c" + at + "-m0.avro", packed, lo, lo + size));
        from += size;
      }
      manifests = runAll(jobs, threads);
      commitsMade = appendAsIngested(manifests);
    } else if (layout.equals("clustered")) {
      manifests = runAll(clustered(packed), threads);
      commitsMade = appendAll(manifests);
    } else {
      throw new IllegalArgumentException("layout=" + layout + ": as_ingested or clustered");
    }
    long deletes = commitDeletes(packed);
    emitDone(manifests, commitsMade, ", \"delete_files\": " + deletes, t0);
  }

  public static void main(String[] argv) throws Exception {
    new ShapedBuilder(parseArgs(argv)).run();
  }
}
