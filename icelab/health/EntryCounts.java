package icelab.health;

import java.io.BufferedInputStream;
import java.io.InputStream;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.FileIO;

/**
 * The doctor's entries read (icelab/health/entry_counts.py): per partition of a table's current
 * snapshot, its live data and delete files summed from every manifest's live entries, read with
 * Iceberg's own manifest reader on a thread pool in the driver, projected to the few columns the
 * sums need. The same sums as the Spark aggregation over the `entries` metadata table
 * (icelab.health.reader.read_partitions), without turning every entry into a Spark row.
 *
 * <p>A first line `#manifests`, then the manifests read from their Avro bytes ({@link
 * DataManifestScan}) and those read by Iceberg's reader. Then one line per (spec, partition): spec id, the partition's values (each a typed token, joined
 * by U+001F), then the sums in {@link #SUMS} order and, last, the data manifests holding it.
 */
public final class EntryCounts {
  /** The sums, in output order (the Python side names them). */
  public static final String SUMS =
      "files,bytes,records,small_files,delete_files,position_delete_files,deletion_vectors,"
          + "equality_delete_files,delete_records,delete_bytes";

  private static final int WIDTH = 10;
  // A data manifest holds data files only: its entries' content and format are not needed.
  private static final List<String> DATA_COLUMNS =
      Arrays.asList("partition", "record_count", "file_size_in_bytes");
  private static final List<String> DELETE_COLUMNS =
      Arrays.asList(
          "content",
          "file_format",
          "partition",
          "record_count",
          "file_size_in_bytes",
          "content_size_in_bytes");

  private EntryCounts() {}

  /**
   * Every live entry of one snapshot's manifests, summed per partition.
   *
   * @param table the loaded table
   * @param snapshotId the snapshot to read (the report's pinned one; a concurrent writer may
   *     move the table's current snapshot meanwhile)
   * @param smallBytes a data file below this size is small
   * @param threads manifests read at once
   * @return one line per partition (see the class comment); empty without a snapshot
   */
  public static String count(Table table, long snapshotId, long smallBytes, int threads)
      throws Exception {
    Snapshot current = table.snapshot(snapshotId);
    if (current == null) {
      return "";
    }
    FileIO io = table.io();
    Map<Integer, PartitionSpec> specs = table.specs();
    ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, threads));
    try {
      List<Future<Map<List<Object>, long[]>>> parts = new ArrayList<>();
      AtomicInteger byScan = new AtomicInteger();
      List<ManifestFile> manifests = current.allManifests(io);
      for (ManifestFile manifest : manifests) {
        parts.add(pool.submit(() -> sums(manifest, io, specs, smallBytes, byScan)));
      }
      Map<List<Object>, long[]> total = new HashMap<>();
      for (Future<Map<List<Object>, long[]>> part : parts) {
        for (Map.Entry<List<Object>, long[]> e : part.get().entrySet()) {
          long[] sum = total.computeIfAbsent(e.getKey(), k -> new long[WIDTH + 1]);
          long[] one = e.getValue();
          for (int i = 0; i < WIDTH; i++) {
            sum[i] += one[i];
          }
          if (one[0] > 0) {
            sum[WIDTH] += 1; // a data manifest holding this partition's live data
          }
        }
      }
      // Tokens once per partition, not once per entry.
      Map<String, long[]> lines = new TreeMap<>();
      for (Map.Entry<List<Object>, long[]> e : total.entrySet()) {
        lines.put(line(e.getKey()), e.getValue());
      }
      // First, how the manifests were read: from their Avro bytes, or by Iceberg's reader.
      StringBuilder out = new StringBuilder("#manifests\t").append(byScan.get()).append('\t')
          .append(manifests.size() - byScan.get()).append('\n');
      for (Map.Entry<String, long[]> e : lines.entrySet()) {
        out.append(e.getKey());
        for (long v : e.getValue()) {
          out.append('\t').append(v);
        }
        out.append('\n');
      }
      return out.toString();
    } finally {
      pool.shutdownNow();
    }
  }

  private static Map<List<Object>, long[]> sums(
      ManifestFile manifest,
      FileIO io,
      Map<Integer, PartitionSpec> specs,
      long smallBytes,
      AtomicInteger byScan)
      throws Exception {
    try {
      return read(manifest, io, specs, smallBytes, byScan);
    } catch (Exception e) {
      // Named, so that the doctor's broken-table message can say which manifest failed.
      throw new RuntimeException("cannot read manifest " + manifest.path(), e);
    }
  }

  private static Map<List<Object>, long[]> read(
      ManifestFile manifest,
      FileIO io,
      Map<Integer, PartitionSpec> specs,
      long smallBytes,
      AtomicInteger byScan)
      throws Exception {
    Map<List<Object>, long[]> out = new HashMap<>();
    int spec = manifest.partitionSpecId();
    // An encrypted manifest (key metadata) is left to Iceberg's reader, which decrypts it.
    if (manifest.content() == ManifestContent.DATA && manifest.keyMetadata() == null) {
      try (InputStream in = io.newInputFile(manifest.path(), manifest.length()).newStream()) {
        DataManifestScan.scan(
            new BufferedInputStream(in, 1 << 16),
            (partition, records, bytes) -> addData(out, key(spec, partition), records, bytes, smallBytes));
        byScan.incrementAndGet();
        return out;
      } catch (DataManifestScan.Unsupported e) {
        out.clear(); // read again, whole, by Iceberg's reader
      }
    }
    if (manifest.content() == ManifestContent.DATA) {
      try (ManifestReader<DataFile> reader = ManifestFiles.read(manifest, io, specs).select(DATA_COLUMNS)) {
        for (DataFile file : reader) {
          addData(out, key(spec, file.partition()), file.recordCount(), file.fileSizeInBytes(), smallBytes);
        }
      }
    } else {
      try (ManifestReader<DeleteFile> reader =
          ManifestFiles.readDeleteManifest(manifest, io, specs).select(DELETE_COLUMNS)) {
        for (DeleteFile file : reader) {
          // A deletion vector's file is a whole Puffin file holding many vectors; its own blob's
          // length is content_size_in_bytes (format v3).
          Long blob = file.contentSizeInBytes();
          addDelete(out, spec, file, blob != null ? blob : file.fileSizeInBytes(), smallBytes);
        }
      }
    }
    return out;
  }

  private static void addData(
      Map<List<Object>, long[]> out, List<Object> key, long records, long size, long smallBytes) {
    long[] v = out.computeIfAbsent(key, k -> new long[WIDTH]);
    v[0] += 1;
    v[1] += size;
    v[2] += records;
    v[3] += size < smallBytes ? 1 : 0;
  }

  private static void addDelete(
      Map<List<Object>, long[]> out, int spec, DeleteFile file, long size, long smallBytes) {
    long[] v = out.computeIfAbsent(key(spec, file.partition()), k -> new long[WIDTH]);
    long records = file.recordCount();
    FileContent content = file.content();
    boolean vector = content == FileContent.POSITION_DELETES && file.format() == FileFormat.PUFFIN;
    v[4] += 1;
    v[5] += content == FileContent.POSITION_DELETES && !vector ? 1 : 0;
    v[6] += vector ? 1 : 0;
    v[7] += content == FileContent.EQUALITY_DELETES ? 1 : 0;
    v[8] += records;
    v[9] += size;
  }

  /** The spec id, then the scan's values (new objects of its own per entry). */
  static List<Object> key(int spec, Object[] partition) {
    List<Object> out = new ArrayList<>(partition.length + 1);
    out.add(spec);
    out.addAll(Arrays.asList(partition));
    return out;
  }

  /**
   * The spec id, then the partition's values, copied: a reader may reuse the objects it hands out
   * (a string's buffer, a binary's), so a key keeps values of its own.
   */
  static List<Object> key(int spec, StructLike partition) {
    List<Object> out = new ArrayList<>(partition.size() + 1);
    out.add(spec);
    for (int i = 0; i < partition.size(); i++) {
      Object value = partition.get(i, Object.class);
      if (value instanceof ByteBuffer) {
        ByteBuffer copy = ((ByteBuffer) value).duplicate();
        byte[] bytes = new byte[copy.remaining()];
        copy.get(bytes);
        value = ByteBuffer.wrap(bytes);  // its own array, whole: `token` reads it back as is
      } else if (value instanceof byte[]) {
        value = ByteBuffer.wrap(((byte[]) value).clone());
      } else if (value instanceof CharSequence) {
        value = value.toString();
      }
      out.add(value);
    }
    return out;
  }

  /** A key as its output line's start: the spec id, a tab, each value a typed token. */
  private static String line(List<Object> key) {
    StringBuilder out = new StringBuilder().append(key.get(0)).append('\t');
    for (int i = 1; i < key.size(); i++) {
      if (i > 1) {
        out.append('\u001f');
      }
      out.append(token(key.get(i)));
    }
    return out.toString();
  }

  private static String token(Object value) {
    Base64.Encoder b64 = Base64.getEncoder();
    if (value == null) {
      return "n";
    }
    if (value instanceof Integer || value instanceof Long) {
      return "i" + value;
    }
    if (value instanceof Boolean) {
      return "b" + ((Boolean) value ? 1 : 0);
    }
    if (value instanceof Float || value instanceof Double) {
      return "f" + value;
    }
    if (value instanceof BigDecimal) {
      return "d" + ((BigDecimal) value).toPlainString();
    }
    if (value instanceof ByteBuffer) {
      return "x" + b64.encodeToString(((ByteBuffer) value).array()); // a key's copy (`key`)
    }
    // Strings (Iceberg may hold a CharSequence), UUIDs: their text, which Spark gives too.
    return "s" + b64.encodeToString(value.toString().getBytes(StandardCharsets.UTF_8));
  }
}
