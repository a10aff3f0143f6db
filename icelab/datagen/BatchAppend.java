package icelab.datagen;

import java.lang.reflect.Constructor;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.DoubleFieldMetrics;
import org.apache.iceberg.FieldMetrics;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.MetricsConfig;
import org.apache.iceberg.Table;
import org.apache.iceberg.parquet.ParquetUtil;
import org.apache.iceberg.shaded.org.apache.parquet.HadoopReadOptions;
import org.apache.iceberg.shaded.org.apache.parquet.ParquetReadOptions;
import org.apache.iceberg.shaded.org.apache.parquet.column.statistics.Statistics;
import org.apache.iceberg.shaded.org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.iceberg.shaded.org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.iceberg.shaded.org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.iceberg.shaded.org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.iceberg.shaded.org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.iceberg.shaded.org.apache.parquet.schema.PrimitiveType;

/**
 * One ingest batch's data files, written outside Iceberg's writer, committed as one append (one
 * snapshot, one new manifest), with the metrics Iceberg's Parquet writer would give them.
 *
 * <p>The metrics come from each file's footer (ParquetUtil.footerMetrics, as Iceberg's writer
 * computes them when it closes a file), plus what the writer counts itself for each double
 * column: its non-null values, NaN count and bounds. icelab's rows hold no NaN, so those are the
 * footer's statistics, with a NaN count of 0.
 */
public final class BatchAppend {
  private BatchAppend() {}

  /**
   * Append the files in one commit.
   *
   * @param table the Iceberg table
   * @param conf Hadoop settings to read the files' footers with
   * @param files one line per file: path TAB partition path, then, for a file on an object store,
   *     TAB a local file holding its footer TAB its size in bytes
   * @param summary snapshot summary properties, key=value per line (may be empty)
   * @return the new snapshot's id
   */
  public static long append(Table table, Configuration conf, String files, String summary)
      throws Exception {
    MetricsConfig metricsConfig = MetricsConfig.forTable(table);
    // Read options made once: ParquetFileReader.open(InputFile) makes a new Hadoop Configuration
    // for each file, which parses Hadoop's XML defaults again. That was 71% of the driver's
    // samples in a commit (Java Flight Recorder, effect build).
    ParquetReadOptions options = HadoopReadOptions.builder(conf).build();
    org.apache.iceberg.AppendFiles append = table.newAppend();
    for (String line : files.split("\n")) {
      if (line.isEmpty()) {
        continue;
      }
      String[] parts = line.split("\t");
      Path path = new Path(parts[0]);
      // A file on an object store comes with a local copy of its footer and its size: reading
      // them back from the store cost a HEAD and two ranged GETs per file.
      boolean copied = parts.length > 3;
      HadoopInputFile input = HadoopInputFile.fromPath(copied ? new Path(parts[2]) : path, conf);
      long size = copied ? Long.parseLong(parts[3]) : input.getLength();
      ParquetMetadata footer;
      try (ParquetFileReader reader = ParquetFileReader.open(input, options)) {
        footer = reader.getFooter();
      }
      List<FieldMetrics<?>> doubles = doubleMetrics(footer);
      Metrics metrics = ParquetUtil.footerMetrics(footer, doubles.stream(), metricsConfig);
      DataFile file =
          DataFiles.builder(table.spec())
              .withPath(path.toString())
              .withFormat(FileFormat.PARQUET)
              .withFileSizeInBytes(size)
              .withPartitionPath(parts[1])
              .withMetrics(metrics)
              .withSplitOffsets(ParquetUtil.getSplitOffsets(footer))
              .build();
      append.appendFile(file);
    }
    for (String line : summary.split("\n")) {
      int eq = line.indexOf('=');
      if (eq > 0) {
        append.set(line.substring(0, eq), line.substring(eq + 1));
      }
    }
    append.commit();
    return table.currentSnapshot().snapshotId();
  }

  /** What Iceberg's writer counts itself for each double column, from the footer's statistics. */
  static List<FieldMetrics<?>> doubleMetrics(ParquetMetadata footer) throws Exception {
    Map<Integer, long[]> counts = new HashMap<>();
    Map<Integer, double[]> bounds = new HashMap<>();
    for (BlockMetaData block : footer.getBlocks()) {
      for (ColumnChunkMetaData column : block.getColumns()) {
        PrimitiveType type = column.getPrimitiveType();
        if (type.getPrimitiveTypeName() != PrimitiveType.PrimitiveTypeName.DOUBLE
            || type.getId() == null) {
          continue;
        }
        int id = type.getId().intValue();
        Statistics<?> stats = column.getStatistics();
        counts.computeIfAbsent(id, k -> new long[1])[0] +=
            column.getValueCount() - stats.getNumNulls();
        if (stats.hasNonNullValue()) {
          // Parquet writers store a zero minimum as -0.0 (the format's rule for signed zeros);
          // Iceberg's writer counts the value written, and icelab's rows never hold -0.0.
          double lo = 0.0 + (Double) stats.genericGetMin();
          double hi = (Double) stats.genericGetMax();
          double[] b = bounds.get(id);
          bounds.put(id, b == null ? new double[] {lo, hi} : new double[] {Math.min(b[0], lo), Math.max(b[1], hi)});
        }
      }
    }
    List<FieldMetrics<?>> out = new ArrayList<>();
    for (Map.Entry<Integer, long[]> e : counts.entrySet()) {
      double[] b = bounds.get(e.getKey());
      out.add(doubles(e.getKey(), e.getValue()[0], b == null ? null : b[0], b == null ? null : b[1]));
    }
    return out;
  }

  /** Iceberg's writer's metrics of one double column (its constructor is private). */
  static FieldMetrics<?> doubles(int id, long values, Double lower, Double upper) throws Exception {
    Constructor<DoubleFieldMetrics> made =
        DoubleFieldMetrics.class.getDeclaredConstructor(
            int.class, long.class, long.class, Double.class, Double.class);
    made.setAccessible(true);
    return made.newInstance(id, values, 0L, lower, upper);
  }
}
