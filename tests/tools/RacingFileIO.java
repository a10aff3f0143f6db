package icelab.tests;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.io.OutputFile;
import org.apache.spark.sql.SparkSession;

/**
 * Hadoop's FileIO for Iceberg, with a writer that commits at a chosen moment: once armed
 * (`arm`), the first file it is asked to create whose name starts with the prefix given (say
 * `snap-`, a commit's manifest list) is created only after another thread has run the SQL given
 * (say an INSERT into the same table) and finished. Iceberg writes a commit's manifest list after
 * refreshing the table and before committing its new metadata file, so that other commit lands
 * exactly between the two: a real commit conflict, with no timing involved. Then it disarms.
 *
 * <p>A table's catalog uses it by `io-impl` (tests/tools/test_doctor_race.py).
 */
public class RacingFileIO extends HadoopFileIO {
  private static final AtomicReference<String> SQL = new AtomicReference<>();
  private static volatile String prefix = null;
  private static final AtomicInteger RAN = new AtomicInteger();
  private static final AtomicReference<String> TRIGGERED_BY = new AtomicReference<>();

  public RacingFileIO() {
    super();
  }

  /** The next file created whose name starts with `filePrefix` first waits for `sql` to run. */
  public static void arm(String filePrefix, String sql) {
    prefix = filePrefix;
    TRIGGERED_BY.set(null);
    SQL.set(sql);
  }

  /** Disarm; whether it was still armed (the writer never ran). */
  public static boolean disarm() {
    return SQL.getAndSet(null) != null;
  }

  /** How many times the writer ran. */
  public static int ran() {
    return RAN.get();
  }

  /** The file whose creation the writer ran before (null: none yet). */
  public static String triggeredBy() {
    return TRIGGERED_BY.get();
  }

  @Override
  public OutputFile newOutputFile(String path) {
    String name = path.substring(path.lastIndexOf('/') + 1);
    String wanted = prefix;
    if (wanted != null && name.startsWith(wanted)) {
      String sql = SQL.getAndSet(null);
      if (sql != null) {
        TRIGGERED_BY.set(path);
        commitElsewhere(sql);
      }
    }
    return super.newOutputFile(path);
  }

  /** Run `sql` on another thread of this session, and wait for it. */
  private static void commitElsewhere(String sql) {
    AtomicReference<Throwable> failed = new AtomicReference<>();
    SparkSession session = SparkSession.active();
    Thread writer =
        new Thread(
            () -> {
              try {
                session.sql(sql).collect();
              } catch (Throwable t) {
                failed.set(t);
              }
            },
            "racing-writer");
    writer.start();
    try {
      writer.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RuntimeException("interrupted waiting for the racing writer", e);
    }
    if (failed.get() != null) {
      throw new RuntimeException("the racing writer failed", failed.get());
    }
    RAN.incrementAndGet();
  }
}
