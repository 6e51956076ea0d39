// The smallest WebKitGTK 4.1 app, for docs/benchmarks.md: one window, one
// web view, one static page, with the settings the desktop app's window uses
// (no accelerated compositing, the document-viewer cache model). Measured by
// scripts/measure-desktop.sh like the app itself (`FLOOR=1`), it gives the
// platform's own share of the desktop app's idle memory. Not part of the
// product. It logs "page has loaded" when the page has, as the app does.
#include <gtk/gtk.h>
#include <webkit2/webkit2.h>

static void on_load_changed(WebKitWebView *view, WebKitLoadEvent event, gpointer data) {
  (void)view;
  (void)data;
  if (event == WEBKIT_LOAD_FINISHED) g_printerr("page has loaded\n");
}

int main(int argc, char **argv) {
  gtk_init(&argc, &argv);
  GtkWidget *window = gtk_window_new(GTK_WINDOW_TOPLEVEL);
  gtk_window_set_default_size(GTK_WINDOW(window), 1200, 800);
  WebKitWebView *view = WEBKIT_WEB_VIEW(webkit_web_view_new());
  WebKitSettings *settings = webkit_web_view_get_settings(view);
  webkit_settings_set_hardware_acceleration_policy(settings, WEBKIT_HARDWARE_ACCELERATION_POLICY_NEVER);
  webkit_web_context_set_cache_model(webkit_web_view_get_context(view), WEBKIT_CACHE_MODEL_DOCUMENT_VIEWER);
  gtk_container_add(GTK_CONTAINER(window), GTK_WIDGET(view));
  g_signal_connect(view, "load-changed", G_CALLBACK(on_load_changed), NULL);
  g_signal_connect(window, "destroy", G_CALLBACK(gtk_main_quit), NULL);
  webkit_web_view_load_html(view, "<!doctype html><title>floor</title><p>Hello</p>", NULL);
  gtk_widget_show_all(window);
  gtk_main();
  return 0;
}
