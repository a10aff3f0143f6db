package icelab.health;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;
import org.apache.iceberg.shaded.org.apache.avro.LogicalType;
import org.apache.iceberg.shaded.org.apache.avro.LogicalTypes;
import org.apache.iceberg.shaded.org.apache.avro.Schema;

/**
 * A data manifest's live entries read straight from its Avro bytes: per entry, its partition's
 * values, record count and file size, every other field skipped byte by byte.
 *
 * <p>Why: Iceberg's own reader, even projected to three columns, decodes each skipped value (every
 * column's sizes, counts and bounds) through a chain of virtual calls; on a 10M-entry table that
 * was most of the doctor's time (docs/doctor.md, "Readers measured"). Here a skipped array of
 * (int, long) pairs is one loop over varint bytes. The values read are the ones Iceberg's reader
 * gives (tests/health/test_entry_counts.py holds the two equal); anything this class does not
 * know (a codec other than null or deflate, a type it has no rule for) throws {@link
 * Unsupported}, and the caller reads that manifest with Iceberg's reader instead.
 */
final class DataManifestScan {
  /** A manifest this class does not read; Iceberg's reader reads it. */
  static final class Unsupported extends Exception {
    Unsupported(String why) {
      super(why, null, false, false);
    }
  }

  /** What the scan hands out per live entry. */
  interface Sink {
    void entry(Object[] partition, long records, long bytes);
  }

  private static final byte[] MAGIC = {'O', 'b', 'j', 1};
  private static final int DELETED = 2;

  private DataManifestScan() {}

  /** Every live entry of the Avro manifest in `in` to `sink`. */
  static void scan(InputStream in, Sink sink) throws IOException, Unsupported {
    DataInputStream data = new DataInputStream(in);
    byte[] magic = new byte[4];
    data.readFully(magic);
    if (!Arrays.equals(magic, MAGIC)) {
      throw new IOException("not an Avro file");
    }
    Map<String, byte[]> meta = header(data);
    byte[] sync = new byte[16];
    data.readFully(sync);
    String codec = meta.containsKey("avro.codec")
        ? new String(meta.get("avro.codec"), StandardCharsets.UTF_8) : "null";
    if (!codec.equals("null") && !codec.equals("deflate")) {
      throw new Unsupported("codec " + codec);
    }
    byte[] schemaJson = meta.get("avro.schema");
    if (schemaJson == null) {
      throw new IOException("Avro file without a schema");
    }
    Entry plan = Entry.of(new Schema.Parser().parse(new String(schemaJson, StandardCharsets.UTF_8)));
    Inflater inflater = codec.equals("deflate") ? new Inflater(true) : null;
    byte[] block = new byte[1 << 16];
    byte[] raw = new byte[1 << 20];
    byte[] blockSync = new byte[16];
    try {
      while (true) {
        long count;
        try {
          count = varlong(data);
        } catch (EOFException end) {
          return;
        }
        int size = (int) varlong(data);
        if (block.length < size) {
          block = new byte[size];
        }
        data.readFully(block, 0, size);
        data.readFully(blockSync);
        if (!Arrays.equals(sync, blockSync)) {
          throw new IOException("Avro block without its sync marker");
        }
        Buf buf;
        if (inflater == null) {
          buf = new Buf(block, 0, size);
        } else {
          inflater.reset();
          inflater.setInput(block, 0, size);
          int n = 0;
          while (!inflater.finished()) {
            if (n == raw.length) {
              raw = Arrays.copyOf(raw, raw.length * 2);
            }
            int got = inflater.inflate(raw, n, raw.length - n);
            if (got == 0 && (inflater.needsInput() || inflater.needsDictionary())) {
              throw new IOException("a deflate block cut short");
            }
            n += got;
          }
          buf = new Buf(raw, 0, n);
        }
        try {
          for (long i = 0; i < count; i++) {
            plan.read(buf, sink);
          }
        } catch (ArrayIndexOutOfBoundsException e) {
          throw new IOException("a record runs past its block", e);
        }
      }
    } catch (DataFormatException e) {
      throw new IOException("a deflate block that does not inflate", e);
    } finally {
      if (inflater != null) {
        inflater.end();
      }
    }
  }

  private static Map<String, byte[]> header(DataInputStream in) throws IOException {
    Map<String, byte[]> meta = new HashMap<>();
    for (long n = varlong(in); n != 0; n = varlong(in)) {
      if (n < 0) {
        n = -n;
        varlong(in); // the block's byte size
      }
      for (long i = 0; i < n; i++) {
        String key = new String(bytes(in), StandardCharsets.UTF_8);
        meta.put(key, bytes(in));
      }
    }
    return meta;
  }

  private static byte[] bytes(DataInputStream in) throws IOException {
    byte[] out = new byte[(int) varlong(in)];
    in.readFully(out);
    return out;
  }

  private static long varlong(DataInputStream in) throws IOException {
    long raw = 0;
    for (int shift = 0; ; shift += 7) {
      int b = in.read();
      if (b < 0) {
        if (shift == 0) {
          throw new EOFException();
        }
        throw new IOException("a varint cut short");
      }
      raw |= (long) (b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        return (raw >>> 1) ^ -(raw & 1);
      }
    }
  }

  /** Decoded bytes of one block, read forward. */
  static final class Buf {
    final byte[] b;
    int pos;
    final int end;

    Buf(byte[] b, int pos, int end) {
      this.b = b;
      this.pos = pos;
      this.end = end;
    }

    long varlong() throws IOException {
      long raw = 0;
      for (int shift = 0; ; shift += 7) {
        if (pos >= end) {
          throw new IOException("a record runs past its block");
        }
        int x = b[pos++];
        raw |= (long) (x & 0x7f) << shift;
        if ((x & 0x80) == 0) {
          return (raw >>> 1) ^ -(raw & 1);
        }
      }
    }

    /** Past `n` varints without decoding them. */
    void skipVarints(long n) throws IOException {
      int p = pos;
      for (long i = 0; i < n; i++) {
        while ((b[p++] & 0x80) != 0) {
          // a continuation byte
        }
      }
      if (p > end) {
        throw new IOException("a record runs past its block");
      }
      pos = p;
    }

    /** Past `n` (varint, length-prefixed bytes) pairs: a bounds map's (field id, value) items. */
    void skipVarintBytesPairs(long n) throws IOException {
      for (long i = 0; i < n; i++) {
        while ((b[pos++] & 0x80) != 0) {
          // the key's continuation bytes
        }
        skip(varlong());
      }
    }

    void skip(long n) throws IOException {
      if (n < 0 || pos + n > end) {
        throw new IOException("a record runs past its block");
      }
      pos += (int) n;
    }

    byte[] take(int n) throws IOException {
      skip(n);
      return Arrays.copyOfRange(b, pos - n, pos);
    }
  }

  /** How one value of a writer's schema is passed over. */
  abstract static class Skip {
    abstract void skip(Buf buf) throws IOException;

    static Skip of(Schema s) throws Unsupported {
      switch (s.getType()) {
        case NULL:
          return NONE;
        case BOOLEAN:
          return new Fixed(1);
        case FLOAT:
          return new Fixed(4);
        case DOUBLE:
          return new Fixed(8);
        case FIXED:
          return new Fixed(s.getFixedSize());
        case INT:
        case LONG:
        case ENUM:
          return new Varints(1);
        case BYTES:
        case STRING:
          return BYTES;
        case UNION:
          return new Union(s);
        case ARRAY:
          return new Blocks(of(s.getElementType()), null);
        case MAP:
          return new Blocks(of(s.getValueType()), BYTES);
        case RECORD:
          return record(s);
        default:
          throw new Unsupported("Avro type " + s.getType());
      }
    }

    /**
     * A record of ints and longs only (a stats map's pair) is one run of varints; an (int, bytes)
     * record (a bounds map's pair) has a loop of its own.
     */
    private static Skip record(Schema s) throws Unsupported {
      List<Skip> fields = new ArrayList<>();
      boolean varints = true;
      for (Schema.Field f : s.getFields()) {
        Skip one = of(f.schema());
        fields.add(one);
        varints &= one instanceof Varints;
      }
      if (varints) {
        return new Varints(fields.size());
      }
      if (fields.size() == 2 && fields.get(0) instanceof Varints && ((Varints) fields.get(0)).n == 1
          && fields.get(1) == BYTES) {
        return VARINT_BYTES;
      }
      return new Record(fields.toArray(new Skip[0]));
    }
  }

  private static final Skip NONE =
      new Skip() {
        @Override
        void skip(Buf buf) {}
      };

  private static final Skip BYTES =
      new Skip() {
        @Override
        void skip(Buf buf) throws IOException {
          buf.skip(buf.varlong());
        }
      };

  private static final Skip VARINT_BYTES =
      new Skip() {
        @Override
        void skip(Buf buf) throws IOException {
          buf.skipVarintBytesPairs(1);
        }
      };

  static final class Fixed extends Skip {
    private final int n;

    Fixed(int n) {
      this.n = n;
    }

    @Override
    void skip(Buf buf) throws IOException {
      buf.skip(n);
    }
  }

  static final class Varints extends Skip {
    final int n;

    Varints(int n) {
      this.n = n;
    }

    @Override
    void skip(Buf buf) throws IOException {
      buf.skipVarints(n);
    }
  }

  static final class Record extends Skip {
    private final Skip[] fields;

    Record(Skip[] fields) {
      this.fields = fields;
    }

    @Override
    void skip(Buf buf) throws IOException {
      for (Skip f : fields) {
        f.skip(buf);
      }
    }
  }

  static final class Union extends Skip {
    private final Skip[] branches;

    Union(Schema s) throws Unsupported {
      List<Skip> out = new ArrayList<>();
      for (Schema b : s.getTypes()) {
        out.add(of(b));
      }
      branches = out.toArray(new Skip[0]);
    }

    @Override
    void skip(Buf buf) throws IOException {
      long i = buf.varlong();
      if (i < 0 || i >= branches.length) {
        throw new IOException("a union branch out of range");
      }
      branches[(int) i].skip(buf);
    }
  }

  /** An array (or a map: `key` set) in blocks; a block that gives its byte size is jumped over. */
  static final class Blocks extends Skip {
    private final Skip item;
    private final Skip key;
    private final int pairVarints;

    Blocks(Skip item, Skip key) {
      this.item = item;
      this.key = key;
      this.pairVarints = key == null && item instanceof Varints ? ((Varints) item).n : 0;
    }

    @Override
    void skip(Buf buf) throws IOException {
      for (long n = buf.varlong(); n != 0; n = buf.varlong()) {
        if (n < 0) {
          buf.skip(buf.varlong());
          continue;
        }
        if (pairVarints > 0) {
          buf.skipVarints(n * pairVarints);
          continue;
        }
        if (item == VARINT_BYTES) {
          buf.skipVarintBytesPairs(n);
          continue;
        }
        for (long i = 0; i < n; i++) {
          if (key != null) {
            key.skip(buf);
          }
          item.skip(buf);
        }
      }
    }
  }

  /** One partition value as Iceberg's reader gives it (EntryCounts.key's forms). */
  interface Value {
    Object read(Buf buf) throws IOException;

    static Value of(Schema s) throws Unsupported {
      LogicalType logical = s.getLogicalType();
      switch (s.getType()) {
        case UNION:
          return new OptionalValue(s);
        case NULL:
          return buf -> null;
        case BOOLEAN:
          return buf -> {
            buf.skip(1);
            return buf.b[buf.pos - 1] != 0;
          };
        case INT:
          return buf -> (int) buf.varlong();
        case LONG:
          return buf -> buf.varlong();
        case FLOAT:
          return buf -> ByteBuffer.wrap(buf.take(4)).order(ByteOrder.LITTLE_ENDIAN).getFloat();
        case DOUBLE:
          return buf -> ByteBuffer.wrap(buf.take(8)).order(ByteOrder.LITTLE_ENDIAN).getDouble();
        case STRING:
          return buf -> new String(buf.take((int) buf.varlong()), StandardCharsets.UTF_8);
        case BYTES:
          if (logical instanceof LogicalTypes.Decimal) {
            int scale = ((LogicalTypes.Decimal) logical).getScale();
            return buf -> new BigDecimal(new BigInteger(buf.take((int) buf.varlong())), scale);
          }
          return buf -> ByteBuffer.wrap(buf.take((int) buf.varlong()));
        case FIXED:
          int size = s.getFixedSize();
          if (logical instanceof LogicalTypes.Decimal) {
            int scale = ((LogicalTypes.Decimal) logical).getScale();
            return buf -> new BigDecimal(new BigInteger(buf.take(size)), scale);
          }
          if (logical != null && logical.getName().equals("uuid") && size == 16) {
            return buf -> {
              ByteBuffer bb = ByteBuffer.wrap(buf.take(16));
              return new UUID(bb.getLong(), bb.getLong()).toString();
            };
          }
          return buf -> ByteBuffer.wrap(buf.take(size));
        default:
          throw new Unsupported("partition value of Avro type " + s.getType());
      }
    }
  }

  static final class OptionalValue implements Value {
    private final Value[] branches;

    OptionalValue(Schema s) throws Unsupported {
      List<Value> out = new ArrayList<>();
      for (Schema b : s.getTypes()) {
        out.add(Value.of(b));
      }
      branches = out.toArray(new Value[0]);
    }

    @Override
    public Object read(Buf buf) throws IOException {
      long i = buf.varlong();
      if (i < 0 || i >= branches.length) {
        throw new IOException("a union branch out of range");
      }
      return branches[(int) i].read(buf);
    }
  }

  /** The manifest_entry record: its status and data_file read, the rest skipped. */
  static final class Entry {
    // Per field of manifest_entry: the status, the data file, or skipped.
    private final int[] kinds;
    private final Skip[] skips;
    private final DataFileFields dataFile;

    private static final int SKIP = 0, STATUS = 1, DATA_FILE = 2;

    private Entry(int[] kinds, Skip[] skips, DataFileFields dataFile) {
      this.kinds = kinds;
      this.skips = skips;
      this.dataFile = dataFile;
    }

    static Entry of(Schema s) throws Unsupported {
      if (s.getType() != Schema.Type.RECORD) {
        throw new Unsupported("a manifest whose records are not records");
      }
      List<Schema.Field> fields = s.getFields();
      int[] kinds = new int[fields.size()];
      Skip[] skips = new Skip[fields.size()];
      DataFileFields dataFile = null;
      for (int i = 0; i < kinds.length; i++) {
        Schema.Field f = fields.get(i);
        if (f.name().equals("status") && f.schema().getType() == Schema.Type.INT) {
          kinds[i] = STATUS;
        } else if (f.name().equals("data_file") && f.schema().getType() == Schema.Type.RECORD) {
          kinds[i] = DATA_FILE;
          dataFile = DataFileFields.of(f.schema());
        } else {
          skips[i] = Skip.of(f.schema());
        }
      }
      if (dataFile == null || Arrays.stream(kinds).noneMatch(k -> k == STATUS)) {
        throw new Unsupported("a manifest without status and data_file");
      }
      return new Entry(kinds, skips, dataFile);
    }

    void read(Buf buf, Sink sink) throws IOException {
      long status = -1;
      for (int i = 0; i < kinds.length; i++) {
        switch (kinds[i]) {
          case STATUS:
            status = buf.varlong();
            break;
          case DATA_FILE:
            dataFile.read(buf);
            break;
          default:
            skips[i].skip(buf);
        }
      }
      if (status != DELETED) {
        if (dataFile.content != 0) {
          throw new IOException("a data manifest holding a delete file");
        }
        sink.entry(dataFile.partition, dataFile.records, dataFile.bytes);
      }
    }
  }

  /** data_file: content, partition, record_count and file_size_in_bytes read, the rest skipped. */
  static final class DataFileFields {
    private static final int SKIP = 0, CONTENT = 1, PARTITION = 2, RECORDS = 3, BYTES_FIELD = 4;
    private final int[] kinds;
    private final Skip[] skips;
    private final Value[] partitionValues;
    Object[] partition;
    long content;
    long records;
    long bytes;

    private DataFileFields(int[] kinds, Skip[] skips, Value[] partitionValues) {
      this.kinds = kinds;
      this.skips = skips;
      this.partitionValues = partitionValues;
    }

    static DataFileFields of(Schema s) throws Unsupported {
      List<Schema.Field> fields = s.getFields();
      int[] kinds = new int[fields.size()];
      Skip[] skips = new Skip[fields.size()];
      Value[] values = null;
      int found = 0;
      for (int i = 0; i < kinds.length; i++) {
        Schema.Field f = fields.get(i);
        Schema.Type t = f.schema().getType();
        if (f.name().equals("content") && t == Schema.Type.INT) {
          kinds[i] = CONTENT;
        } else if (f.name().equals("partition") && t == Schema.Type.RECORD) {
          kinds[i] = PARTITION;
          List<Schema.Field> parts = f.schema().getFields();
          values = new Value[parts.size()];
          for (int j = 0; j < values.length; j++) {
            values[j] = Value.of(parts.get(j).schema());
          }
          found++;
        } else if (f.name().equals("record_count") && t == Schema.Type.LONG) {
          kinds[i] = RECORDS;
          found++;
        } else if (f.name().equals("file_size_in_bytes") && t == Schema.Type.LONG) {
          kinds[i] = BYTES_FIELD;
          found++;
        } else {
          skips[i] = Skip.of(f.schema());
        }
      }
      if (found != 3) {
        throw new Unsupported("a data_file without partition, record_count and file_size_in_bytes");
      }
      return new DataFileFields(kinds, skips, values);
    }

    void read(Buf buf) throws IOException {
      content = 0;
      for (int i = 0; i < kinds.length; i++) {
        switch (kinds[i]) {
          case CONTENT:
            content = buf.varlong();
            break;
          case PARTITION:
            // A new array per entry: the sink may keep it as a key.
            partition = new Object[partitionValues.length];
            for (int j = 0; j < partition.length; j++) {
              partition[j] = partitionValues[j].read(buf);
            }
            break;
          case RECORDS:
            records = buf.varlong();
            break;
          case BYTES_FIELD:
            bytes = buf.varlong();
            break;
          default:
            skips[i].skip(buf);
        }
      }
    }
  }
}
