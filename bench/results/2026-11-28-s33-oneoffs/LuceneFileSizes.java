import org.apache.lucene.store.*;
import org.apache.lucene.index.*;
import org.apache.lucene.codecs.*;
import java.nio.file.*;
import java.util.*;
public class Cfs {
  public static void main(String[] a) throws Exception {
    Directory d = FSDirectory.open(Paths.get(a[0]));
    SegmentInfos sis = SegmentInfos.readLatestCommit(d);
    Map<String,Long> by = new TreeMap<>();
    for (SegmentCommitInfo sci : sis) {
      SegmentInfo si = sci.info;
      Directory cd = si.getUseCompoundFile() ? si.getCodec().compoundFormat().getCompoundReader(d, si, IOContext.DEFAULT) : d;
      for (String f : cd.listAll()) { String ext = f.substring(f.lastIndexOf('.')+1); if (!si.getUseCompoundFile() && !f.startsWith(si.name)) continue; by.merge(ext, cd.fileLength(f), Long::sum); }
    }
    long t=0; for (var e: by.entrySet()) { System.out.println(e.getValue()+" "+e.getKey()); t+=e.getValue(); } System.out.println(t+" total");
  }
}
