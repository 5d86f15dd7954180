package heapledger.agent;

import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32;

/**
 * Cached classes answered in the JVM, without a round trip to the transform service: the steps
 * are in rewrite/transformsvc/agentread.go. The service offers its cache in the hello (the
 * directory, the salt ID that ends every key, a block of site IDs); this class computes a
 * class's key as the service does (transformsvc.cacheKey), reads and checks the entry
 * (internal/filecache's format), and replays it (transformsvc.cachedClass.replay) with IDs of
 * its block if it was made from this very class. Anything it cannot answer exactly — a miss, a
 * damaged entry, another class's entry under the same key, an entry with skipped methods or
 * warnings, a block that cannot be renewed — goes to the service as before. Only CRC-32s are
 * computed per class: java.util.zip.CRC32 is an intrinsic of the interpreter, so a class costs
 * little before the JIT has compiled anything; a SHA-256 is not (docs/benchmarks-startup.md).
 */
final class LocalCache {
    /** filecache: "HLC2", the CRC-32 of key and value (u32), then the value. */
    private static final byte[] MAGIC = {'H', 'L', 'C', '2'};
    private static final int CHECKSUM_AT = 4, HEADER = CHECKSUM_AT + 4;
    /** transformsvc.cacheKey's layout: class CRC-32, class length, name CRC-32, salt ID. */
    private static final int KEY_CLASS_CRC = 0, KEY_CLASS_LEN = 4, KEY_NAME_CRC = 8, KEY_SALT_ID = 12, KEY_SIZE = 32;
    /** filecache.touchAfter: a hit renews an entry's age for the size bound only when older. */
    private static final long TOUCH_AFTER_MILLIS = 3600L * 1000L;
    private static final byte TAG_INTEGER = 3;
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private final File dir;
    private final byte[] saltID;
    /** The salt ID of the class path's classes, or null: the system loader's classes (Agent.classPathArgs). */
    private final byte[] pathSaltID;
    private final Service service;
    // The lease, IDs [next, end) not used yet, and the classes answered; under this.
    private int next, end;
    private final int leaseSize;
    private boolean leaseRefused;
    /** The names went to the service: later classes go there too, so it knows them all. */
    private boolean told;
    private final List<String> names = new ArrayList<String>();
    private int answered;

    private LocalCache(File dir, byte[] saltID, byte[] pathSaltID, Service service, int first, int count) {
        this.dir = dir;
        this.saltID = saltID;
        this.pathSaltID = pathSaltID;
        this.service = service;
        this.next = first;
        this.end = first + count;
        this.leaseSize = count;
    }

    /** The cache the hello's messages offer, or null when they offer none. */
    static LocalCache offered(String helloMessages, Service service) {
        String dir = null, idHex = null, pathIDHex = null;
        int[] lease = null;
        for (String line : helloMessages.split("\n")) {
            String[] f = line.split("\t");
            if ((f.length == 3 || f.length == 4) && f[0].equals("cache")) {
                dir = f[1];
                idHex = f[2];
                pathIDHex = f.length == 4 ? f[3] : null;
            } else if (f.length == 3 && f[0].equals("lease")) {
                lease = parseLease(line);
            }
        }
        if (dir == null || lease == null) return null;
        byte[] id = unhex(idHex), pathID = pathIDHex == null ? null : unhex(pathIDHex);
        if (id == null || id.length != KEY_SIZE - KEY_SALT_ID || (pathIDHex != null && (pathID == null || pathID.length != id.length))) {
            return null; // the service answers every class, as without the offer
        }
        return new LocalCache(new File(dir), id, pathID, service, lease[0], lease[1]);
    }

    private static int[] parseLease(String line) {
        String[] f = line.split("\t");
        if (f.length != 3 || !f[0].equals("lease")) return null;
        try {
            int first = Integer.parseInt(f[1]), count = Integer.parseInt(f[2]);
            return first > 0 && count > 0 && first + count > first ? new int[] {first, count} : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** Runs the lookup once on nothing, so its classes are loaded before any class is. */
    void preload() {
        byte[] none = new byte[0];
        read(key(none, none, false));
        hex(new byte[1]);
        Entry e = new Entry(new byte[HEADER + 1 + 7 * 4], HEADER); // changed, then seven empty u32-counted parts
        e.valid();
        e.madeFrom(none, none);
    }

    /** How many classes this cache answered. */
    synchronized int answered() {
        return answered;
    }

    /**
     * The answer for the class from the cache, as the service would give it (status, bytes,
     * table lines), or null when the service must answer.
     */
    Service.Pending answer(String name, byte[] classFile, boolean classPath) {
        synchronized (this) {
            if (told) return null;
        }
        byte[] nameBytes = name.getBytes(StandardCharsets.UTF_8);
        byte[] stored = read(key(nameBytes, classFile, classPath));
        if (stored == null) return null;
        Entry e = new Entry(stored, HEADER);
        if (!e.valid() || !e.madeFrom(nameBytes, classFile)) return null;
        int first = e.reserved == 0 ? 0 : reserve(e.reserved);
        if (first < 0) return null;
        Service.Pending p = new Service.Pending();
        StringBuilder lines = new StringBuilder();
        byte[] out = null;
        if (e.changed) {
            out = new byte[e.dataLength];
            System.arraycopy(stored, e.dataStart, out, 0, e.dataLength);
            for (int i = 0; i < e.sites.size(); i++) {
                Site s = e.sites.get(i);
                int id = first + i;
                out[s.at] = (byte) (id >>> 24);
                out[s.at + 1] = (byte) (id >>> 16);
                out[s.at + 2] = (byte) (id >>> 8);
                out[s.at + 3] = (byte) id;
                lines.append("site\t").append(id).append('\t').append(s.kind).append('\t').append(oneLine(s.type)).append('\t')
                        .append(oneLine(s.method)).append('\t').append(s.offset).append('\t').append(s.line).append('\n');
            }
        }
        synchronized (p) {
            p.status = e.changed ? Service.CHANGED : Service.UNCHANGED;
            p.cached = true;
            p.bytes = out;
            p.table = lines.toString();
            p.messages = "";
            p.done = true;
        }
        synchronized (this) {
            if (told) return null; // its IDs stay unnamed, as a lease's unused ones
            names.add(name);
            answered++;
        }
        return p;
    }

    /**
     * The control request that tells the service the classes answered here; sent when there
     * are none too, since without it the service takes the classes it knows for incomplete.
     */
    synchronized String namesRequest() {
        told = true;
        StringBuilder b = new StringBuilder("names\n");
        for (String n : names) b.append(n).append('\n');
        names.clear();
        return b.toString();
    }

    /**
     * n IDs of the lease, renewed if need be: the first, or -1 when the service must answer.
     * The renewal's round trip is made outside the lock: a failure there warns on System.err,
     * whose lock a thread loading a class may hold while it waits for this one.
     */
    private int reserve(int n) {
        synchronized (this) {
            if (n <= end - next) return take(n);
            if (leaseRefused || n > leaseSize) return -1; // more IDs than a lease holds: the service reserves them
        }
        Service.Pending p = service.transform("", "", "lease", new byte[0]);
        int[] lease = p == null || p.status != Service.UNCHANGED ? null : parseLease(p.messages.trim());
        synchronized (this) {
            if (lease == null) {
                leaseRefused = true;
                return -1;
            }
            if (n > end - next) { // else another thread renewed meanwhile: this lease stays unused
                next = lease[0];
                end = lease[0] + lease[1];
            }
            return n <= end - next ? take(n) : -1;
        }
    }

    /** Under this. */
    private int take(int n) {
        int first = next;
        next += n;
        return first;
    }

    /**
     * transformsvc.cacheKey: the class's CRC-32 and length, the name's CRC-32, the salt ID.
     * classPath: the class is the system loader's, which the service rewrites with the class
     * path as its input under a salt of its own, when it offered one.
     */
    private byte[] key(byte[] name, byte[] classFile, boolean classPath) {
        byte[] k = new byte[KEY_SIZE];
        putU32(k, KEY_CLASS_CRC, crc(classFile, 0, classFile.length));
        putU32(k, KEY_CLASS_LEN, classFile.length);
        putU32(k, KEY_NAME_CRC, crc(name, 0, name.length));
        byte[] id = classPath && pathSaltID != null ? pathSaltID : saltID;
        System.arraycopy(id, 0, k, KEY_SALT_ID, id.length);
        return k;
    }

    private static int crc(byte[] b, int off, int len) {
        CRC32 c = new CRC32();
        c.update(b, off, len);
        return (int) c.getValue();
    }

    private static void putU32(byte[] b, int at, int v) {
        b[at] = (byte) (v >>> 24);
        b[at + 1] = (byte) (v >>> 16);
        b[at + 2] = (byte) (v >>> 8);
        b[at + 3] = (byte) v;
    }

    /** The entry file, checked as filecache.Get checks it (its value starts at HEADER); null when missing or damaged. */
    private byte[] read(byte[] key) {
        String h = hex(key);
        File f = new File(new File(dir, h.substring(0, 2)), h);
        long size = f.length();
        if (size < HEADER || size > Integer.MAX_VALUE) return null;
        byte[] b = new byte[(int) size];
        try {
            FileInputStream in = new FileInputStream(f);
            try {
                int off = 0;
                while (off < b.length) {
                    int r = in.read(b, off, b.length - off);
                    if (r < 0) return null;
                    off += r;
                }
                if (in.read() >= 0) return null; // grew since: being replaced
            } finally {
                in.close();
            }
        } catch (IOException e) {
            return null;
        }
        for (int i = 0; i < MAGIC.length; i++) {
            if (b[i] != MAGIC[i]) return null;
        }
        CRC32 c = new CRC32();
        c.update(key, 0, key.length);
        c.update(b, HEADER, b.length - HEADER);
        int sum = (int) c.getValue();
        int stored = ((b[CHECKSUM_AT] & 0xFF) << 24) | ((b[CHECKSUM_AT + 1] & 0xFF) << 16) | ((b[CHECKSUM_AT + 2] & 0xFF) << 8) | (b[CHECKSUM_AT + 3] & 0xFF);
        if (stored != sum) return null; // the service removes and replaces it
        long now = System.currentTimeMillis();
        if (now - f.lastModified() > TOUCH_AFTER_MILLIS) f.setLastModified(now); // best effort
        return b;
    }

    private static String oneLine(String s) {
        return s.replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
    }

    static String hex(byte[] b) {
        char[] c = new char[b.length * 2];
        for (int i = 0; i < b.length; i++) {
            c[2 * i] = HEX[(b[i] >> 4) & 0xF];
            c[2 * i + 1] = HEX[b[i] & 0xF];
        }
        return new String(c);
    }

    /** The bytes of a hex string, or null when it is none. */
    private static byte[] unhex(String s) {
        if (s.length() % 2 != 0) return null;
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) {
            int hi = Character.digit(s.charAt(2 * i), 16), lo = Character.digit(s.charAt(2 * i + 1), 16);
            if (hi < 0 || lo < 0) return null;
            b[i] = (byte) (hi << 4 | lo);
        }
        return b;
    }

    /** One site of an entry: where its ID lies in the class bytes, and what it is. */
    private static final class Site {
        int at, offset, line;
        String kind, type, method;
    }

    /**
     * An entry as transformsvc.cachedClass.encode writes it: u8 changed | str name | u32
     * length, original class bytes | u32 reserved | u32 sites, each u32 offset of the ID, str kind, str type, str method, i32 offset, i32 line |
     * u32 skips, each three str | u32 warnings, each str | u32 length, class bytes; str is u32
     * length and UTF-8. Checked as decodeCachedClass checks it; entries with skips or warnings
     * are left to the service, whose messages word them.
     */
    private static final class Entry {
        final byte[] b;
        int off;
        boolean bad;
        boolean changed;
        int nameStart, nameLength, originalStart, originalLength;
        int reserved;
        final List<Site> sites = new ArrayList<Site>();
        int dataStart, dataLength;

        /** The entry that starts at b[off]. */
        Entry(byte[] b, int off) {
            this.b = b;
            this.off = off;
        }

        boolean valid() {
            if (b.length < off + 1) return false;
            changed = b[off++] == 1;
            nameLength = count();
            nameStart = off;
            off += nameLength;
            originalLength = count();
            originalStart = off;
            off += originalLength;
            reserved = u32();
            int n = count();
            for (int i = 0; i < n && !bad; i++) {
                Site s = new Site();
                s.at = u32();
                s.kind = str();
                s.type = str();
                s.method = str();
                s.offset = u32();
                s.line = u32();
                sites.add(s);
            }
            if (bad || u32() != 0 || u32() != 0) return false; // skips, warnings: the service's
            dataLength = u32();
            dataStart = off;
            if (bad || dataLength < 0 || dataLength != b.length - off) return false;
            if (changed && dataLength == 0) return false; // replay reads it as unchanged: the service's to answer
            if (reserved < 0 || sites.size() > reserved || (!changed && !sites.isEmpty())) return false;
            for (Site s : sites) {
                if (s.at < 1 || s.at > dataLength - 4 || b[dataStart + s.at - 1] != TAG_INTEGER) return false;
            }
            return true;
        }

        /** Whether the entry was made from this class: its key says so only likely. */
        boolean madeFrom(byte[] name, byte[] classFile) {
            return nameLength == name.length && originalLength == classFile.length
                    && ByteBuffer.wrap(b, nameStart, nameLength).equals(ByteBuffer.wrap(name))
                    && ByteBuffer.wrap(b, originalStart, originalLength).equals(ByteBuffer.wrap(classFile));
        }

        private int u32() {
            if (off + 4 > b.length) {
                bad = true;
                return 0;
            }
            int v = ((b[off] & 0xFF) << 24) | ((b[off + 1] & 0xFF) << 16) | ((b[off + 2] & 0xFF) << 8) | (b[off + 3] & 0xFF);
            off += 4;
            return v;
        }

        /** A count of items that take a byte at least each, checked against what is left. */
        private int count() {
            int n = u32();
            if (n < 0 || n > b.length - off) bad = true;
            return bad ? 0 : n;
        }

        private String str() {
            int n = u32();
            if (bad || n < 0 || n > b.length - off) {
                bad = true;
                return "";
            }
            String s = new String(b, off, n, StandardCharsets.UTF_8);
            off += n;
            return s;
        }
    }
}
