package icelab.core;

import java.io.IOException;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.RemoteIterator;

/**
 * A recursive listing in one call from Python: one line per file, "path TAB length".
 *
 * <p>On local disk it walks the directories with listStatus. There, listFiles(path, true) builds a
 * LocatedFileStatus per file, which copies the file's permission and owner, and Hadoop's local
 * file system reads those by running a shell command per file: minutes over a table of tens of
 * thousands of files. On an object store listFiles is one flat listing, so it is kept. From
 * Python, walking the iterator would add four py4j round trips per file.
 */
public final class ListFiles {
  private ListFiles() {}

  public static String list(FileSystem fs, Path path, String suffix) throws IOException {
    StringBuilder out = new StringBuilder();
    if (fs instanceof LocalFileSystem || fs instanceof RawLocalFileSystem) {
      walk(fs, fs.getFileStatus(path), suffix, out);
      return out.toString();
    }
    RemoteIterator<LocatedFileStatus> it = fs.listFiles(path, true);
    while (it.hasNext()) {
      add(it.next(), suffix, out);
    }
    return out.toString();
  }

  private static void add(FileStatus status, String suffix, StringBuilder out) {
    String name = status.getPath().toString();
    if (name.endsWith(suffix)) {
      out.append(name).append('\t').append(status.getLen()).append('\n');
    }
  }

  private static void walk(FileSystem fs, FileStatus status, String suffix, StringBuilder out)
      throws IOException {
    if (status.isDirectory()) {
      for (FileStatus child : fs.listStatus(status.getPath())) {
        walk(fs, child, suffix, out);
      }
      return;
    }
    add(status, suffix, out);
  }
}
