// An HDFS mini cluster on loopback for the tests: one NameNode and one DataNode under a scratch
// folder, on a free port. Prints "READY hdfs://127.0.0.1:<port>" once the cluster accepts
// requests, then runs until its standard input closes (the test run ended or died) or it gets
// SIGTERM, and shuts the cluster down either way.
import java.io.File;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.MiniDFSCluster;

public class MiniHdfs {
  public static void main(String[] args) throws Exception {
    File base = new File(args[0]);
    Configuration conf = new Configuration();
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.getAbsolutePath());
    conf.set("dfs.namenode.rpc-bind-host", "127.0.0.1");
    conf.set("dfs.datanode.address", "127.0.0.1:0");
    conf.set("dfs.datanode.ipc.address", "127.0.0.1:0");
    conf.set("dfs.datanode.http.address", "127.0.0.1:0");
    conf.set("dfs.namenode.http-address", "127.0.0.1:0");
    conf.setBoolean("dfs.webhdfs.enabled", false);
    conf.setBoolean("dfs.permissions.enabled", false);
    conf.setInt("dfs.replication", 1);
    conf.setLong("dfs.blocksize", 1048576);
    conf.setLong("dfs.namenode.fs-limits.min-block-size", 1048576);
    // Not set: dfs.namenode.file.close.num-committed-allowed (HDFS-8999). It would spare the
    // 500 ms hdfs-native sleeps when a close beats the DataNode's block report, but a file read
    // right after such a close did not return the bytes written (tried with 3.3.6).
    MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf)
        .numDataNodes(1).nameNodePort(0).format(true).build();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> cluster.shutdown(true)));
    cluster.waitActive();
    System.out.println("READY hdfs://127.0.0.1:" + cluster.getNameNodePort());
    System.out.flush();
    while (System.in.read() != -1) {
      // wait for stdin to close
    }
    System.exit(0); // runs the shutdown hook
  }
}
