package icelab.health;

import java.io.File;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Files;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.ManifestWriter;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterator;
import org.apache.iceberg.io.FileIO;

/**
 * The bytes a manifest rewrite writes (icelab/health/manifest_bytes.py): a sample of the live
 * entries of the default spec's data manifests, written with Iceberg's manifest writer as a
 * rewrite writes them, once as a manifest of the first entry and once as a manifest of them all.
 * The same sample and the same writes as manifest_bytes.written_sizes' py4j path, in one call
 * instead of one py4j call per entry read and written.
 */
public final class WrittenSizes {
  private WrittenSizes() {}

  /**
   * The sample's manifests' bytes.
   *
   * @param table the loaded table
   * @param snapshotId the snapshot whose manifests are sampled
   * @param formatVersion the format version the manifests are written in
   * @param limit the most entries sampled
   * @param manifests the most manifests sampled from, spread over the list
   * @param dir a directory for the two manifests written
   * @return "one many entries": the bytes of the one-entry manifest, of the sample's manifest,
   *     and the sample's entries; empty when there is no such snapshot or fewer than two entries
   */
  public static String sizes(
      Table table, Long snapshotId, Integer formatVersion, Integer limit, Integer manifests, String dir)
      throws Exception {
    Snapshot snapshot = table.snapshot(snapshotId);
    if (snapshot == null) {
      return "";
    }
    PartitionSpec spec = table.spec();
    FileIO io = table.io();
    Map<Integer, PartitionSpec> specs = table.specs();
    List<ManifestFile> mine = new ArrayList<>();
    for (ManifestFile m : snapshot.dataManifests(io)) {
      if (m.partitionSpecId() == spec.specId()) {
        mine.add(m);
      }
    }
    int step = Math.max(1, ceilDiv(mine.size(), manifests));
    List<ManifestFile> chosen = new ArrayList<>();
    for (int i = 0; i < mine.size(); i += step) {
      chosen.add(mine.get(i));
    }
    int each = Math.max(1, ceilDiv(limit, Math.max(chosen.size(), 1)));
    List<DataFile> files = new ArrayList<>();
    List<Long> snapshots = new ArrayList<>();
    for (ManifestFile manifest : chosen) {
      try (ManifestReader<DataFile> reader = ManifestFiles.read(manifest, io, specs);
          CloseableIterator<DataFile> it = reader.iterator()) {
        int taken = 0;
        while (taken < each && it.hasNext()) {
          files.add(it.next().copy());
          snapshots.add(manifest.snapshotId());
          taken += 1;
        }
      }
    }
    if (files.size() < 2) {
      return "";
    }
    // A rewrite clusters entries by partition; neighbours alike compress alike. A stable sort,
    // as Python's, so that equal partitions keep their order.
    List<Integer> order = new ArrayList<>();
    for (int i = 0; i < files.size(); i++) {
      order.add(i);
    }
    order.sort(Comparator.comparing(i -> files.get(i).partition().toString()));
    long one = write(formatVersion, spec, files, snapshots, order.subList(0, 1), new File(dir, "one.avro"));
    long many = write(formatVersion, spec, files, snapshots, order, new File(dir, "many.avro"));
    return one + " " + many + " " + files.size();
  }

  private static int ceilDiv(int a, int b) {
    return -Math.floorDiv(-a, b);
  }

  private static long write(
      int version,
      PartitionSpec spec,
      List<DataFile> files,
      List<Long> snapshots,
      List<Integer> order,
      File path)
      throws Exception {
    ManifestWriter<DataFile> writer = ManifestFiles.write(version, spec, Files.localOutput(path), null);
    try {
      for (int i : order) {
        DataFile f = files.get(i);
        Long seq = f.dataSequenceNumber();
        writer.existing(f, snapshots.get(i), seq != null ? seq : 0L, f.fileSequenceNumber());
      }
    } finally {
      writer.close();
    }
    return writer.length();
  }
}
