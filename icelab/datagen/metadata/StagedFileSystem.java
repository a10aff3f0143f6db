// The builder's file system for a state measured on a store (icelab.datagen.metadata.staging):
// the files under the state's place on the store (icelab.staged.prefix, e.g. s3a://bucket/meta/x)
// are kept under a local directory (icelab.staged.root) instead; any other path of the scheme is
// the local file system's own (only for file:, where the builder also reads its template).
//
// Iceberg names every file it writes by its full URI: a table built at s3a://... names its
// manifests, manifest lists and metadata files there, and its data files under its location.
// Built through this file system, the state's files are those the builder would have written on
// the store itself, but each write and each of the hundreds of commits of an as-ingested layout
// is a local file operation instead of tens of round trips; staging.py then copies the files up
// as they are. Set as fs.<scheme>.impl in the builder's own JVM only (its core-site.xml).
package icelab.metadata;

import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;

public class StagedFileSystem extends RawLocalFileSystem {
  private URI uri;
  private String prefix;
  private File root;

  @Override
  public void initialize(URI name, Configuration conf) throws IOException {
    String given = conf.get("icelab.staged.prefix");
    String dir = conf.get("icelab.staged.root");
    if (given == null || dir == null) {
      throw new IOException("icelab.staged.prefix and icelab.staged.root must both be set");
    }
    Path place = new Path(given);
    URI at = place.toUri();
    uri = URI.create(at.getScheme() + "://" + (at.getAuthority() == null ? "" : at.getAuthority()) + "/");
    prefix = place.toString();
    root = new File(dir);
    super.initialize(name, conf);
  }

  @Override
  public URI getUri() {
    // Also called by the superclass's constructor, before initialize.
    return uri == null ? URI.create("file:///") : uri;
  }

  @Override
  public String getScheme() {
    return getUri().getScheme();
  }

  @Override
  public File pathToFile(Path path) {
    checkPath(path);
    String full = makeQualified(path).toString();
    if (full.equals(prefix) || full.startsWith(prefix + "/")) {
      return new File(root, full.substring(prefix.length()));
    }
    if (!"file".equals(getScheme())) {
      throw new IllegalArgumentException(full + " is outside the staged place " + prefix);
    }
    return super.pathToFile(path);
  }

  // A status names the path asked for, not the local file that holds it.
  @Override
  public FileStatus getFileStatus(Path path) throws IOException {
    File file = pathToFile(path);
    if (!file.exists()) {
      throw new FileNotFoundException(path.toString());
    }
    return new FileStatus(
        file.isDirectory() ? 0 : file.length(),
        file.isDirectory(),
        1,
        getDefaultBlockSize(path),
        file.lastModified(),
        makeQualified(path));
  }

  @Override
  public FileStatus[] listStatus(Path path) throws IOException {
    File file = pathToFile(path);
    if (!file.isDirectory()) {
      return new FileStatus[] {getFileStatus(path)};
    }
    String[] names = file.list();
    if (names == null) {
      throw new IOException("cannot list " + path);
    }
    FileStatus[] out = new FileStatus[names.length];
    for (int i = 0; i < names.length; i++) {
      out[i] = getFileStatus(new Path(path, names[i]));
    }
    return out;
  }
}
